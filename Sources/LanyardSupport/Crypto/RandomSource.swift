import Foundation

/// Where secrets (refresh tokens, ids, keys) get their randomness; injected so tests can be deterministic.
public protocol RandomSource: Sendable {
    func bytes(_ count: Int) -> [UInt8]
}

public struct SystemRandomSource: RandomSource {
    public init() {}

    /// The system's generator in one call for the whole buffer (glibc 2.36 and Darwin's `arc4random_buf`, a
    /// single `getrandom` on Linux): a sign-in's ids and refresh token were six calls of eight bytes each.
    public func bytes(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if let start = buffer.baseAddress, count > 0 {
                #if canImport(Glibc) || canImport(Darwin)
                arc4random_buf(start, count)
                #else
                var generator = SystemRandomNumberGenerator()
                for index in 0..<count { (start + index).initialize(to: generator.next()) }
                #endif
            }
            initialized = count
        }
    }
}

extension RandomSource {
    /// A random version-4 UUID.
    public func uuid() -> UUID {
        var raw = bytes(16)
        raw[6] = (raw[6] & 0x0F) | 0x40
        raw[8] = (raw[8] & 0x3F) | 0x80
        return UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                           raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
    }

    /// A new id as stored: a lower-case version-7 UUID, 48 bits of Unix milliseconds then 74 random bits.
    /// Ids made close in time sort close together, so each new row lands at the end of its table and
    /// indexes instead of on a random page: a write touches a few pages, not one per index.
    public func newID(at date: Date) -> String {
        var raw = bytes(16)
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        for index in 0..<6 {
            raw[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index)))
        }
        raw[6] = (raw[6] & 0x0F) | 0x70
        raw[8] = (raw[8] & 0x3F) | 0x80
        return UUIDText.lowercase(raw)
    }

    /// A random identifier printed as lower-case hex, e.g. for request ids.
    public func hexString(byteCount: Int) -> String {
        bytes(byteCount).hexString
    }

    /// A number in 0..<1 (for jitter), from 53 random bits.
    public func unitInterval() -> Double {
        let value = bytes(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Double(value >> 11) / Double(UInt64(1) << 53)
    }
}

/// UUID text without Foundation's upper-case rendering and a second pass to lower it: random ids here, derived
/// account ids (`DerivedUserID`).
public enum UUIDText {
    /// 16 bytes in UUID text form, lower case: their `hexString` in groups of 8-4-4-4-12 digits.
    public static func lowercase(_ raw: [UInt8]) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, digit) in raw.hexString.utf8.enumerated() {
            if index == 8 || index == 12 || index == 16 || index == 20 { text.append(UInt8(ascii: "-")) }
            text.append(digit)
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The 16 bytes of UUID text (hex digits of either case in groups of 8-4-4-4-12), or nil for anything else.
    public static func bytes(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return nil }
        var raw: [UInt8] = []
        raw.reserveCapacity(16)
        var high: UInt8?
        for (index, character) in utf8.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard character == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let value = character.hexDigitValue else { return nil }
            if let first = high {
                raw.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return raw
    }
}

extension UInt8 {
    /// The value of this ASCII byte as a hex digit (either case), or nil when it is not one.
    public var hexDigitValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension Sequence where Element == UInt8 {
    /// Lower-case hex, two digits a byte.
    public var hexString: String {
        let digits: StaticString = "0123456789abcdef"
        return digits.withUTF8Buffer { digits in
            var output: [UInt8] = []
            output.reserveCapacity(underestimatedCount * 2)
            for byte in self {
                output.append(digits[Int(byte >> 4)])
                output.append(digits[Int(byte & 0x0F)])
            }
            return String(decoding: output, as: UTF8.self)
        }
    }
}
