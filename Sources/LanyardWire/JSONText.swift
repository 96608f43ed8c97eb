import Foundation

/// Any JSON value, kept as its text: a record's data as the app stored it. Encoded as that JSON value itself (not
/// as a string), and decoded from any JSON value.
///
/// ```swift
/// let data = try WireCoding.decoder().decode(JSONText.self, from: Data(#"{"title":"Buy milk"}"#.utf8))
/// print(data.text)   // {"title":"Buy milk"}
/// ```
public struct JSONText: Sendable, Codable, Equatable {
    /// The JSON text.
    public var text: String

    /// JSON text as it is.
    ///
    /// ```swift
    /// let empty = JSONText(#"{}"#)
    /// ```
    public init(_ text: String) { self.text = text }

    public init(from decoder: any Decoder) throws {
        var text = ""
        try Node(from: decoder).write(to: &text)
        self.text = text
    }

    public func encode(to encoder: any Encoder) throws {
        try JSONDecoder().decode(Node.self, from: Data(text.utf8)).encode(to: encoder)
    }

    /// A JSON value read through `Codable`, written back as compact text.
    private enum Node: Codable {
        case null, bool(Bool), integer(Int64), number(Double), string(String)
        case array([Node]), object([(String, Node)])

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            if let object = try? decoder.container(keyedBy: Key.self) {
                self = .object(try object.allKeys.map { ($0.stringValue, try object.decode(Node.self, forKey: $0)) })
                return
            }
            if var array = try? decoder.unkeyedContainer() {
                var elements: [Node] = []
                while !array.isAtEnd { elements.append(try array.decode(Node.self)) }
                self = .array(elements)
                return
            }
            let value = try decoder.singleValueContainer()
            if value.decodeNil() { self = .null }
            else if let flag = try? value.decode(Bool.self) { self = .bool(flag) }
            else if let integer = try? value.decode(Int64.self) { self = .integer(integer) }
            else if let number = try? value.decode(Double.self) { self = .number(number) }
            else { self = .string(try value.decode(String.self)) }
        }

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .object(let members):
                var container = encoder.container(keyedBy: Key.self)
                for (key, value) in members { try container.encode(value, forKey: Key(stringValue: key)) }
            case .array(let elements):
                var container = encoder.unkeyedContainer()
                for element in elements { try container.encode(element) }
            case .null:
                var container = encoder.singleValueContainer()
                try container.encodeNil()
            case .bool(let flag):
                var container = encoder.singleValueContainer()
                try container.encode(flag)
            case .integer(let integer):
                var container = encoder.singleValueContainer()
                try container.encode(integer)
            case .number(let number):
                var container = encoder.singleValueContainer()
                try container.encode(number)
            case .string(let string):
                var container = encoder.singleValueContainer()
                try container.encode(string)
            }
        }

        func write(to text: inout String) {
            switch self {
            case .null: text += "null"
            case .bool(let flag): text += flag ? "true" : "false"
            case .integer(let integer): text += String(integer)
            case .number(let number): text += number.isFinite ? "\(number)" : "null"
            case .string(let string): Self.quote(string, into: &text)
            case .array(let elements):
                text += "["
                for (index, element) in elements.enumerated() {
                    if index > 0 { text += "," }
                    element.write(to: &text)
                }
                text += "]"
            case .object(let members):
                text += "{"
                for (index, (key, value)) in members.enumerated() {
                    if index > 0 { text += "," }
                    Self.quote(key, into: &text)
                    text += ":"
                    value.write(to: &text)
                }
                text += "}"
            }
        }

        static func quote(_ string: String, into text: inout String) {
            text += "\""
            for scalar in string.unicodeScalars {
                switch scalar {
                case "\"": text += "\\\""
                case "\\": text += "\\\\"
                case "\n": text += "\\n"
                case "\r": text += "\\r"
                case "\t": text += "\\t"
                case _ where scalar.value < 0x20: text += String(format: "\\u%04x", scalar.value)
                default: text.unicodeScalars.append(scalar)
                }
            }
            text += "\""
        }
    }
}
