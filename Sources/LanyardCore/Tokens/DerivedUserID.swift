import Foundation
import LanyardSupport

/// `LANYARD_USER_ID_STRATEGY=derived` (reference section 4): the first 16 bytes of SHA-256 of
/// `"{provider}:{sub}"`, with the version nibble set to 4 and the variant bits to `10`.
public enum DerivedUserID {
    public static func make(provider: String, subject: String) -> String {
        var bytes = Array(Hashing.sha256(Array("\(provider):\(subject)".utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUIDText.lowercase(bytes)
    }
}
