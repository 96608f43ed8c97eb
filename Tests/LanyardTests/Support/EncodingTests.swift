import Foundation
import Testing
@testable import LanyardCore
@testable import LanyardProviders
@testable import LanyardServer
import LanyardStore
@testable import LanyardSupport

@Suite struct JSONValueTests {
    @Test func parsingKeepsEveryJSONType() throws {
        let parsed = try #require(JSONParser.parseObject(Array(
            #"{"s":"x","i":9999999999,"d":1.5,"t":true,"f":false,"z":0,"o":1,"n":null,"a":["b",2],"m":{"k":"v"}}"#.utf8)))
        #expect(parsed["s"] == .string("x"))
        #expect(parsed["i"] == .number(9_999_999_999))
        #expect(parsed["d"] == .number(1.5))
        #expect(parsed["t"] == .bool(true))
        #expect(parsed["f"] == .bool(false))
        #expect(parsed["z"] == .number(0))
        #expect(parsed["o"] == .number(1))
        #expect(parsed["n"] == .null)
        #expect(parsed["a"] == .array([.string("b"), .number(2)]))
        #expect(parsed["m"] == .object(["k": .string("v")]))
        #expect(JSONParser.parseObject(Array("[1]".utf8)) == nil)
        #expect(JSONParser.parseObject(Array("{".utf8)) == nil)
    }
}

@Suite struct Base64URLTests {
    @Test func roundTripsEveryLengthAgainstFoundation() throws {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            let foundation = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(encoded == foundation)
            #expect(Base64URL.decode(encoded) == bytes)
        }
    }

    @Test(arguments: ["a", "ab=", "a+b/", "ab cd", "é", "AB", "ABC", "AAAAA*", "AAAA*A", "AB*D", "AAAA\u{0}AA"])
    func refusesWhatIsNotCanonicalBase64URL(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}

@Suite struct TimestampTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (1_795_282_184_961, "2026-11-21T17:29:44.961Z"),
        (951_782_400_500, "2000-02-29T00:00:00.500Z"),
        (4_102_444_799_999, "2099-12-31T23:59:59.999Z"),
        (1_689_543_600_123, "2023-07-16T21:40:00.123Z"),
    ])
    func storedMillisecondsPrintExactly(milliseconds: Int64, expected: String) {
        #expect(Timestamps.format(Date(unixMilliseconds: milliseconds)) == expected)
    }
}

@Suite struct HexStringTests {
    @Test func printsTwoLowerCaseDigitsPerByte() {
        #expect([0x00, 0x0f, 0xa5, 0xff].hexString == "000fa5ff")
        #expect([UInt8]().hexString == "")
        // FIPS 180-2's first SHA-256 example, printed through the same extension.
        #expect(Hashing.sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
