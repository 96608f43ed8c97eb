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

    /// Whether a presented secret (an admin or API key) is the expected one, compared in constant time: the
    /// two SHA-256 hashes byte by byte without stopping early, so neither the content nor the length leaks.
    public static func isSameSecret(_ presented: String, _ expected: String) -> Bool {
        zip(sha256(Array(presented.utf8)), sha256(Array(expected.utf8))).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
