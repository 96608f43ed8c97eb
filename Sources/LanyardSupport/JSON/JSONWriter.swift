import Foundation

/// A value that writes its own JSON; used by the responses on every hot path, where `JSONEncoder`'s
/// generality costs more than the rest of the request.
public protocol JSONWritable {
    func write(to writer: inout JSONWriter)
}

/// Appends JSON to a byte buffer: objects, arrays, and the scalar kinds the API uses.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []
    /// Per open container: whether the next member needs a comma before it.
    private var needsComma: [Bool] = []

    public init(capacity: Int = 1024) {
        bytes.reserveCapacity(capacity)
    }

    public static func write(_ value: some JSONWritable) -> [UInt8] {
        var writer = JSONWriter()
        value.write(to: &writer)
        return writer.bytes
    }

    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
        body(&self)
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    public mutating func array<S: Sequence>(_ elements: S, _ body: (inout JSONWriter, S.Element) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma.append(false)
        for element in elements { body(&self, element) }
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "]"))
    }

    /// Starts a member of the current object; the value written next belongs to it.
    public mutating func key(_ name: String) {
        separate()
        appendString(name)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    public mutating func string(_ value: String?) {
        separate()
        if let value { appendString(value) } else { appendLiteral("null") }
    }

    public mutating func bool(_ value: Bool) {
        separate()
        appendLiteral(value ? "true" : "false")
    }

    public mutating func integer(_ value: Int64) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func date(_ value: Date?) {
        string(value.map(Timestamps.format))
    }

    public mutating func value(_ value: some JSONWritable) {
        value.write(to: &self)
    }

    /// Any JSON value, in time linear in its size (`JSONEncoder` spends time on each level's coding path).
    public mutating func json(_ value: JSONValue) {
        switch value {
        case .null: separate(); appendLiteral("null")
        case .bool(let flag): bool(flag)
        case .number(let number): self.number(number)
        case .string(let text): string(text)
        case .array(let elements): array(elements) { $0.json($1) }
        case .object(let members):
            object { json in
                for (name, member) in members {
                    json.key(name)
                    json.json(member)
                }
            }
        }
    }

    /// A number as `JSONValue.encode(to:)` writes it: whole numbers without a fraction.
    public mutating func number(_ value: Double) {
        if value == value.rounded(), abs(value) < 9e15 {
            integer(Int64(value))
        } else {
            separate()
            bytes.append(contentsOf: "\(value)".utf8)
        }
    }

    /// JSON text written earlier by this writer (a stored record), copied as it is; `null` for nil (a tombstone).
    public mutating func raw(json text: String?) {
        guard let text else { return string(nil) }
        separate()
        bytes.append(contentsOf: text.utf8)
    }

    public mutating func strings(_ values: [String]) {
        array(values) { $0.string($1) }
    }

    /// Set between a key and its value, which takes no comma.
    private var afterKey = false

    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        guard let last = needsComma.last else { return }
        if last { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    private mutating func appendLiteral(_ literal: StaticString) {
        literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private mutating func appendString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            // Runs that need no escaping (nearly everything: tokens, ids, times) are copied whole.
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                appendEscaped(byte)
                runStart = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
        case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
        case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
        case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                      hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
        }
    }
}
