import Foundation

/// Files holding secrets or personal data (the master key, the emulator's keys, the SQLite database): readable by
/// their owner only (reference section 16), in folders only their owner can enter.
public enum SecretFile {
    /// Creates `path` and any missing parents as 0700; a folder that exists is left as it is (the operator chose it).
    public static func createDirectory(atPath path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    /// Creates an empty file at `path` as 0600 unless something is there already, so that what is written into it
    /// later (SQLite's database, and its `-wal` and `-shm`, which SQLite gives the database's mode) is never
    /// readable by others, whatever the umask.
    public static func createEmptyIfAbsent(atPath path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            close(descriptor)
        } else if errno != EEXIST {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }

    /// Written atomically and only if absent, mode 0600, so two processes starting together end up with the same
    /// secret.
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
