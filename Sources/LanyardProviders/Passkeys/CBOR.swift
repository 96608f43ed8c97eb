/// A CBOR data item (RFC 8949) as WebAuthn uses it: integers, byte and text strings, arrays, maps, booleans
/// and null. Floats, tags, undefined and indefinite lengths never appear in an attestation object or a COSE key,
/// and are refused rather than guessed at.
public enum CBOR: Sendable, Hashable {
    case unsigned(UInt64)
    /// A negative integer, held as its value (`-1 - n` of the encoded `n`); one beyond `Int64` is refused.
    case negative(Int64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map([CBORPair])
    case bool(Bool)
    case null

    /// The integer value of `.unsigned` or `.negative`, when it fits an `Int64`.
    public var integer: Int64? {
        switch self {
        case .unsigned(let value): value <= UInt64(Int64.max) ? Int64(value) : nil
        case .negative(let value): value
        default: nil
        }
    }

    /// The value stored under `key` in a map.
    public subscript(key: CBOR) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key == key }?.value
    }

    public subscript(text key: String) -> CBOR? { self[.text(key)] }
    public subscript(int key: Int64) -> CBOR? { self[key >= 0 ? .unsigned(UInt64(key)) : .negative(key)] }
}

public struct CBORPair: Sendable, Hashable {
    public var key: CBOR
    public var value: CBOR

    public init(key: CBOR, value: CBOR) {
        (self.key, self.value) = (key, value)
    }
}

/// Why a CBOR input was refused; the text is for logs and tests, the caller answers `malformed`.
public struct CBORError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Decodes CBOR under hard limits: the input's length bounds every declared length, containers nest at most
/// `maximumDepth` deep and hold at most `maximumItems` entries, and a map key appears once. Arguments longer than
/// they need be are read (some security keys write them), not refused.
public struct CBORDecoder {
    public static let maximumDepth = 8
    public static let maximumItems = 128
    /// Larger than any attestation object an authenticator sends; the parser never reads beyond it.
    public static let maximumInput = 16 * 1024

    private let bytes: [UInt8]
    private(set) var offset: Int

    private init(_ bytes: [UInt8], offset: Int) {
        self.bytes = bytes
        self.offset = offset
    }

    /// The one item `bytes` holds; trailing bytes are refused.
    public static func decode(_ bytes: [UInt8]) throws(CBORError) -> CBOR {
        let (item, end) = try decodePrefix(bytes, from: 0)
        guard end == bytes.count else { throw CBORError("\(bytes.count - end) bytes after the item") }
        return item
    }

    /// The item that starts at `start`, and where it ends (authenticator data holds a COSE key followed by more).
    public static func decodePrefix(_ bytes: [UInt8], from start: Int) throws(CBORError) -> (CBOR, end: Int) {
        guard bytes.count <= maximumInput else { throw CBORError("longer than \(maximumInput) bytes") }
        var decoder = CBORDecoder(bytes, offset: start)
        let item = try decoder.item(depth: 0)
        return (item, decoder.offset)
    }

    private mutating func byte() throws(CBORError) -> UInt8 {
        guard offset < bytes.count else { throw CBORError("truncated") }
        defer { offset += 1 }
        return bytes[offset]
    }

    private mutating func take(_ count: UInt64) throws(CBORError) -> ArraySlice<UInt8> {
        guard count <= UInt64(bytes.count - offset) else { throw CBORError("a length of \(count) runs past the end") }
        let end = offset + Int(count)
        defer { offset = end }
        return bytes[offset..<end]
    }

    /// The argument of an initial byte: the value itself, or 1, 2, 4 or 8 bytes after it, in the shortest form.
    private mutating func argument(_ info: UInt8) throws(CBORError) -> UInt64 {
        switch info {
        case 0..<24: return UInt64(info)
        case 24...27:
            let width = 1 << Int(info - 24)
            var value: UInt64 = 0
            for byte in try take(UInt64(width)) { value = value << 8 | UInt64(byte) }
            return value
        case 31: throw CBORError("indefinite lengths are not accepted")
        default: throw CBORError("reserved additional information \(info)")
        }
    }

    private mutating func count(_ info: UInt8) throws(CBORError) -> Int {
        let value = try argument(info)
        guard value <= UInt64(Self.maximumItems) else { throw CBORError("a container of \(value) items") }
        return Int(value)
    }

    private mutating func item(depth: Int) throws(CBORError) -> CBOR {
        guard depth <= Self.maximumDepth else { throw CBORError("nested deeper than \(Self.maximumDepth)") }
        let initial = try byte()
        let major = initial >> 5, info = initial & 0x1f
        switch major {
        case 0:
            return .unsigned(try argument(info))
        case 1:
            let encoded = try argument(info)
            guard encoded <= UInt64(Int64.max) else { throw CBORError("a negative integer beyond 64 bits") }
            return .negative(-1 - Int64(encoded))
        case 2:
            return .bytes(Array(try take(try argument(info))))
        case 3:
            guard let text = String(validating: try take(try argument(info)), as: UTF8.self) else {
                throw CBORError("a text string that is not UTF-8")
            }
            return .text(text)
        case 4:
            let count = try count(info)
            var items: [CBOR] = []
            items.reserveCapacity(count)
            for _ in 0..<count { items.append(try item(depth: depth + 1)) }
            return .array(items)
        case 5:
            let count = try count(info)
            var pairs: [CBORPair] = []
            pairs.reserveCapacity(count)
            for _ in 0..<count {
                let key = try item(depth: depth + 1)
                guard !pairs.contains(where: { $0.key == key }) else { throw CBORError("a map key appears twice") }
                pairs.append(CBORPair(key: key, value: try item(depth: depth + 1)))
            }
            return .map(pairs)
        case 6:
            throw CBORError("tags are not accepted")
        default:
            switch info {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            default: throw CBORError("simple value or float \(info) is not accepted")
            }
        }
    }
}

/// Encodes the CBOR WebAuthn needs (for tests' software authenticators and fixtures), in the shortest form.
public enum CBOREncoder {
    public static func encode(_ item: CBOR) -> [UInt8] {
        var out: [UInt8] = []
        append(item, to: &out)
        return out
    }

    private static func head(_ major: UInt8, _ value: UInt64, to out: inout [UInt8]) {
        switch value {
        case 0..<24: out.append(major << 5 | UInt8(value))
        case 24...0xff: out += [major << 5 | 24, UInt8(value)]
        case 0x100...0xffff: out += [major << 5 | 25] + (0..<2).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        case 0x10000...0xffff_ffff: out += [major << 5 | 26] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        default: out += [major << 5 | 27] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
    }

    private static func append(_ item: CBOR, to out: inout [UInt8]) {
        switch item {
        case .unsigned(let value): head(0, value, to: &out)
        case .negative(let value): head(1, UInt64(-1 - value), to: &out)
        case .bytes(let bytes): head(2, UInt64(bytes.count), to: &out); out += bytes
        case .text(let text): head(3, UInt64(text.utf8.count), to: &out); out += Array(text.utf8)
        case .array(let items): head(4, UInt64(items.count), to: &out); items.forEach { append($0, to: &out) }
        case .map(let pairs):
            head(5, UInt64(pairs.count), to: &out)
            for pair in pairs { append(pair.key, to: &out); append(pair.value, to: &out) }
        case .bool(let value): out.append(value ? 0xf5 : 0xf4)
        case .null: out.append(0xf6)
        }
    }
}
