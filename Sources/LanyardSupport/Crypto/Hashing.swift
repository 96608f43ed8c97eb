import Crypto
import Foundation

public enum Hashing {
    /// SHA-256 of the UTF-8 bytes of `text`, as lower-case hex.
    public static func sha256Hex(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).hexString
    }

    public static func sha256(_ bytes: some DataProtocol) -> [UInt8] {
        Array(SHA256.hash(data: bytes))
    }
}
