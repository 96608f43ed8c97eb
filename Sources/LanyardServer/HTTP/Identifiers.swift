import Foundation
import Hummingbird

/// Ids of accounts, sessions and identities are lower-case UUIDs; clients may send them in any case (a Swift `UUID`
/// prints upper case, and Supabase's Swift client sends identity ids so). GoTrue parses ids as UUIDs; so do we.
enum Identifiers {
    /// `text` in lower case when it is a UUID; anything else as it came, to be refused as unknown.
    static func canonical(_ text: String) -> String {
        UUID(uuidString: text) == nil ? text : text.lowercased()
    }
}

extension LanyardRequestContext {
    /// The path parameter `name`, an id: in the stored (lower-case) form when it is a UUID.
    func identifier(_ name: String) throws -> String {
        Identifiers.canonical(try parameters.require(name))
    }
}
