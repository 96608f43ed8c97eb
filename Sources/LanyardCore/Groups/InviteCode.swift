import LanyardSupport

/// An invite code (reference section 14): 10 characters of Crockford's base32 (50 random bits), shown as
/// `K7QMX-2XPDA`, typeable from a message or read aloud. Entered codes are normalized (case, dashes and spaces,
/// the letters O, I and L read as 0, 1 and 1), and only the SHA-256 of the normalized code is stored.
public enum InviteCode {
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    static let length = 10

    /// A new code, dashed for display.
    static func generate(_ random: any RandomSource) -> String {
        var bits = random.bytes(7).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        var characters: [UInt8] = []
        for _ in 0..<length {
            characters.append(alphabet[Int(bits & 31)])
            bits >>= 5
        }
        return String(decoding: characters[0..<5], as: UTF8.self) + "-" + String(decoding: characters[5...], as: UTF8.self)
    }

    /// The code as stored and compared: upper case, no separators, look-alike letters read as digits; `nil` for text
    /// that cannot be a code.
    public static func normalize(_ text: String) -> String? {
        var result: [UInt8] = []
        for byte in text.uppercased().utf8 {
            switch byte {
            case UInt8(ascii: "-"), UInt8(ascii: " "): continue
            case UInt8(ascii: "O"): result.append(UInt8(ascii: "0"))
            case UInt8(ascii: "I"), UInt8(ascii: "L"): result.append(UInt8(ascii: "1"))
            default:
                guard alphabet.contains(byte) else { return nil }
                result.append(byte)
            }
        }
        return result.count == length ? String(decoding: result, as: UTF8.self) : nil
    }

    static func hash(normalized code: String) -> String {
        Hashing.sha256Hex("lanyard-invite:" + code)
    }
}
