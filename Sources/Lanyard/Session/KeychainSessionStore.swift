#if canImport(Security)
import Foundation
import Security

/// Keeps the session in the Keychain as generic passwords, readable after the device's first unlock so that
/// background refresh works, and shareable with app extensions through an access group. The default store on
/// Apple platforms.
///
/// ```swift
/// // Share the session with a widget: both targets list the group in their Keychain Sharing entitlement.
/// let store = KeychainSessionStore(service: "com.example.app.lanyard", accessGroup: "TEAMID.com.example.shared")
/// let client = LanyardClient(url: serverURL, storage: store)
/// ```
public struct KeychainSessionStore: SessionStore {
    /// The Keychain service the items are filed under.
    public let service: String
    /// The access group shared with extensions, if any.
    public let accessGroup: String?

    /// A store under `service`, optionally in `accessGroup`.
    ///
    /// ```swift
    /// let store = KeychainSessionStore(service: "com.example.app.lanyard")
    /// ```
    public init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    public func data(forKey key: String) throws -> Data? {
        var query = baseQuery(key)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        switch status {
        case errSecSuccess: return result as? Data
        case errSecItemNotFound: return nil
        default: throw KeychainError(status: status)
        }
    }

    public func setData(_ data: Data?, forKey key: String) throws {
        let query = baseQuery(key)
        guard let data else {
            let status = SecItemDelete(query as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status: status) }
            return
        }
        let attributes: [String: Any] = [kSecValueData as String: data,
                                         kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly]
        var status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            status = SecItemAdd(query.merging(attributes) { $1 } as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw KeychainError(status: status) }
    }

    private func baseQuery(_ key: String) -> [String: Any] {
        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                    kSecAttrService as String: service,
                                    kSecAttrAccount as String: key]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }
}

/// A Keychain call failed with `status` (an `OSStatus`).
///
/// ```swift
/// catch let error as KeychainError { print("Keychain status", error.status) }
/// ```
public struct KeychainError: Error, Sendable, Equatable {
    /// The `OSStatus` the Keychain answered.
    public let status: Int32
}
#endif
