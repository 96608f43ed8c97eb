import Foundation

/// Files holding generated secrets (the master key, the emulator's keys): mode 0600, written atomically and
/// only if absent, so two processes starting together end up with the same secret.
public enum SecretFile {
    public static func writeOnce(_ contents: Data, to path: String) throws {
        let temporary = path + ".tmp-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
        guard FileManager.default.createFile(atPath: temporary, contents: contents, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary])
        }
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        // link(2) fails if the target exists: the first writer wins and nobody overwrites it.
        if link(temporary, path) != 0 && errno != EEXIST {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }
}
