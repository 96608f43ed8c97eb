import Foundation

/// Where a `LanyardClient` keeps what must survive a restart: the session (its tokens and the user) and the
/// sync cursors of data collections, each under a key. Calls are synchronous and quick.
///
/// The SDK ships `KeychainSessionStore` (Apple platforms), `FileSessionStore` (a 0600 file) and
/// `MemorySessionStore` (tests, previews). Conform your own type to keep sessions elsewhere:
///
/// ```swift
/// struct EncryptedDefaultsStore: SessionStore {
///     func data(forKey key: String) throws -> Data? { /* read and decrypt */ nil }
///     func setData(_ data: Data?, forKey key: String) throws { /* encrypt and write; nil removes */ }
/// }
/// let client = LanyardClient(url: serverURL, storage: EncryptedDefaultsStore())
/// ```
public protocol SessionStore: Sendable {
    /// The data stored under `key`, or nil.
    func data(forKey key: String) throws -> Data?
    /// Stores `data` under `key`; nil removes it.
    func setData(_ data: Data?, forKey key: String) throws
}

/// Keeps everything in memory: a session lasts as long as the store.
///
/// ```swift
/// let store = MemorySessionStore()
/// let client = LanyardClient(url: serverURL, storage: store)
/// ```
public final class MemorySessionStore: SessionStore, @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: Data] = [:]

    /// An empty store.
    ///
    /// ```swift
    /// let client = LanyardClient(url: serverURL, storage: MemorySessionStore())
    /// ```
    public init() {}

    public func data(forKey key: String) throws -> Data? {
        lock.withLock { values[key] }
    }

    public func setData(_ data: Data?, forKey key: String) throws {
        lock.withLock { values[key] = data }
    }
}
