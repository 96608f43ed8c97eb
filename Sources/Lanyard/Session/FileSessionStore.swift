import Foundation

/// Keeps the session in one JSON file that only its owner can read or write (mode 0600), replaced atomically on
/// every change. The default store on Linux; on Apple platforms prefer `KeychainSessionStore`.
///
/// ```swift
/// let store = FileSessionStore(fileURL: URL(fileURLWithPath: "/var/lib/myapp/lanyard-session.json"))
/// let client = LanyardClient(url: serverURL, storage: store)
/// ```
public final class FileSessionStore: SessionStore, @unchecked Sendable {
    /// The file.
    public let fileURL: URL
    private let lock = NSLock()

    /// A store in `fileURL`; its folder is created (0700) when first written.
    ///
    /// ```swift
    /// let store = FileSessionStore(fileURL: FileManager.default.temporaryDirectory.appendingPathComponent("s.json"))
    /// ```
    public init(fileURL: URL) {
        self.fileURL = fileURL
    }

    public func data(forKey key: String) throws -> Data? {
        try lock.withLock { try readAll()[key] }
    }

    public func setData(_ data: Data?, forKey key: String) throws {
        try lock.withLock {
            var all = try readAll()
            all[key] = data
            try writeAll(all)
        }
    }

    private func readAll() throws -> [String: Data] {
        guard let contents = FileManager.default.contents(atPath: fileURL.path), !contents.isEmpty else { return [:] }
        return try JSONDecoder().decode([String: Data].self, from: contents)
    }

    private func writeAll(_ all: [String: Data]) throws {
        let manager = FileManager.default
        let folder = fileURL.deletingLastPathComponent()
        try manager.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Written to a private temporary file first, then moved over the old one: never a half-written session,
        // never a moment where the file is readable by others.
        let temporary = folder.appendingPathComponent(".\(fileURL.lastPathComponent).\(UUID().uuidString)")
        guard manager.createFile(atPath: temporary.path, contents: try JSONEncoder().encode(all),
                                 attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        do {
            if manager.fileExists(atPath: fileURL.path) {
                _ = try manager.replaceItemAt(fileURL, withItemAt: temporary)
            } else {
                try manager.moveItem(at: temporary, to: fileURL)
            }
        } catch {
            try? manager.removeItem(at: temporary)
            throw error
        }
    }
}
