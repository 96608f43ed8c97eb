import Foundation
import LanyardSupport
import Testing

/// `JSONParser` reads every ID token and request body, before any signature is checked: it must accept
/// exactly JSON, agree with Foundation on what JSON means, and refuse the rest without crashing.
@Suite struct JSONParserTests {
    func parse(_ text: String) throws(JSONParser.Failure) -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    /// The same document through Foundation, converted to `JSONValue` (booleans are `NSNumber`s of type "c").
    static func foundation(_ bytes: [UInt8]) -> JSONValue? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed) else { return nil }
        func convert(_ value: Any) -> JSONValue {
            switch value {
            case let string as String: return .string(string)
            case let number as NSNumber:
                return String(cString: number.objCType) == "c" ? .bool(number.boolValue) : .number(number.doubleValue)
            case let array as [Any]: return .array(array.map(convert))
            case let object as [String: Any]: return .object(object.mapValues(convert))
            default: return .null
            }
        }
        return convert(object)
    }

    static let valid = [
        #"{}"#, #"[]"#, #"  {"a" : [ 1 , -2.5e3 , true , false , null , "x" ] }  "#, "\t\r\n{\"a\":{\"b\":{}}}\n",
        #"{"iss":"https://appleid.apple.com","aud":"com.example.app","exp":1731000000,"iat":1730996400,"sub":"001234.abc","email_verified":"true"}"#,
        #""\"\\\/\b\f\n\r\t""#, #""caf\u00e9 \u00E9 \ud83d\ude00 ü 😀""#, #""\u0000""#,
        "0", "-0", "1e3", "1E+3", "1.5e-2", "0.1", "123456789012345", "-9007199254740993", "1e308",
        #"[[[[["deep"]]]]]"#, #"{"a":1,"b":{"a":2}}"#,
    ]

    @Test(arguments: valid)
    func acceptsJSONAndReadsItAsFoundationDoes(text: String) throws {
        let ours = try parse(text)
        #expect(ours == Self.foundation(Array(text.utf8)))
    }

    @Test func readsEscapesAndNumbers() throws {
        #expect(try parse(#""a\"b\\c\/d\u00e9\ud83d\ude00""#) == .string("a\"b\\c/dé😀"))
        #expect(try parse(#"[-0.5, 2e2, 10]"#) == .array([.number(-0.5), .number(200), .number(10)]))
        #expect(try parse(#"{"t":true,"f":false,"n":null}"#) == .object(["t": .bool(true), "f": .bool(false), "n": .null]))
    }

    static let invalid: [(String, String)] = [
        ("", "unexpected end of input"), ("   ", "unexpected end of input"), ("{", "expected a name in quotes"),
        ("}", "unexpected character"), ("[1,]", "unexpected character"), (#"{"a":1,}"#, "expected a name in quotes"),
        ("01", "unexpected data after the value"), ("1.", "invalid number"), (".5", "unexpected character"),
        ("+1", "unexpected character"), ("1e", "invalid number"), ("-", "invalid number"), ("tru", "unexpected character"),
        ("nul", "unexpected character"), ("NaN", "unexpected character"), ("Infinity", "unexpected character"),
        (#""\x""#, "invalid escape"), (#""\u12""#, "invalid escape"), (#""\u12G4""#, "invalid escape"),
        (#""\ud800""#, "unpaired surrogate"), (#""\udc00""#, "unpaired surrogate"), (#""\ud800\u0041""#, "unpaired surrogate"),
        ("\"a\nb\"", "control character in a string"), ("\"abc", "unterminated string"), (#""abc\"#, "unterminated string"),
        ("1e400", "number out of range"), ("-1e400", "number out of range"), (#"{"a":1}x"#, "unexpected data after the value"),
        (#"{"a":1 "b":2}"#, "expected ',' or '}'"), ("{a:1}", "expected a name in quotes"), ("{'a':1}", "expected a name in quotes"),
        (#"{"a" 1}"#, "expected ':'"), ("[1 2]", "expected ',' or ']'"), ("\u{FEFF}{}", "unexpected character"),
        (#"{"a":1,"a":2}"#, #"the name "a" appears twice"#), (#"{"a":1,"\u0061":2}"#, #"the name "a" appears twice"#),
        (#"{"aud":"app","x":{},"aud":"attacker"}"#, #"the name "aud" appears twice"#),
    ]

    @Test(arguments: invalid)
    func refusesWhatIsNotJSON(text: String, reason: String) {
        #expect(throws: JSONParser.Failure.self) { try parse(text) }
        do {
            _ = try parse(text)
        } catch {
            #expect(error.reason == reason)
        }
    }

    @Test func saysWhereTheInputWentWrong() {
        #expect(throws: JSONParser.Failure(offset: 7, reason: "expected ',' or '}'")) { try parse(#"{"a":1 "b":2}"#) }
        #expect(throws: JSONParser.Failure(offset: 7, reason: #"the name "a" appears twice"#)) { try parse(#"{"a":1,"a":2}"#) }
    }

    @Test func refusesInvalidUTF8InStrings() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC0, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22]] {
            #expect(throws: JSONParser.Failure(offset: bytes.count - 1, reason: "invalid UTF-8 in a string")) {
                try JSONParser.parse(bytes)
            }
        }
        // Invalid UTF-8 beside an escape is refused too.
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0x5C, 0x6E, 0xFF, 0x22]) }
    }

    @Test func nestingIsBoundedWithoutExhaustingTheStack() throws {
        let limit = JSONParser.maximumDepth
        let deepest = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect(try parse(deepest) != .null)
        let tooDeep = String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)
        #expect(throws: JSONParser.Failure(offset: limit, reason: "nested too deeply")) { try parse(tooDeep) }
        let hostile = String(repeating: #"{"a":"#, count: 100_000)
        #expect(throws: JSONParser.Failure.self) { try parse(hostile) }
    }

    @Test func parseObjectIsNilForAnythingButAnObject() {
        #expect(JSONParser.parseObject(Array(#"{"k":"v"}"#.utf8)) == ["k": .string("v")])
        #expect(JSONParser.parseObject(Array("[1]".utf8)) == nil)
        #expect(JSONParser.parseObject(Array(#""{}""#.utf8)) == nil)
        #expect(JSONParser.parseObject(Array("{".utf8)) == nil)
        // Input that is not an array (a slice of a larger buffer) reads the same.
        let framed = Array(#"xx{"k":[1,2]}yy"#.utf8)
        #expect(JSONParser.parseObject(framed[2..<(framed.count - 2)]) == ["k": .array([.number(1), .number(2)])])
    }

    /// Random changes to a real claim set: never a crash or hang; never accepted where Foundation refuses;
    /// the same value wherever both accept.
    @Test func mutatedTokensNeverGetFurtherThanFoundationAllows() throws {
        let seed = Array(Self.valid[4].dropLast().utf8) + Array(#","nested":[1,{"x":"\u00e9\n"}]}"#.utf8)
        let alphabet = Array(#"{}[]":,.-+eE0123456789\u"tfnrl aé"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xFF]
        var generator = SystemRandomNumberGenerator()
        var accepted = 0
        for _ in 0..<3_000 {
            var bytes = seed
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[position] = alphabet.randomElement(using: &generator)!
                case 1: bytes.insert(alphabet.randomElement(using: &generator)!, at: position)
                default: if bytes.count > 1 { bytes.remove(at: position) }
                }
            }
            guard let ours = try? JSONParser.parse(bytes) else { continue }
            accepted += 1
            let theirs = Self.foundation(bytes)
            #expect(theirs == ours, "accepted \(String(decoding: bytes, as: UTF8.self))")
        }
        // The check above only means something if some mutations stay valid JSON.
        #expect(accepted > 100)
    }
}

@Suite struct StorableTextTests {
    @Test(arguments: ["\u{0}", "a\u{0}", "\u{0}b", "é\u{0}漢", String(repeating: "x", count: 5000) + "\u{0}"])
    func aNULAnywhereIsFound(text: String) {
        #expect(text.containsNUL)
    }

    @Test(arguments: ["", "plain", "é漢字🙂", String(repeating: "x", count: 5000), "\\u0000"])
    func textWithoutNULIsStorable(text: String) {
        #expect(!text.containsNUL)
    }
}
