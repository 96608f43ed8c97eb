import Foundation
import Testing
@testable import LanyardCore
@testable import LanyardProviders
@testable import LanyardServer
import LanyardStore
@testable import LanyardSupport

@Suite struct JSONWriterTests {
    struct Sample: JSONWritable {
        func write(to writer: inout JSONWriter) {
            writer.object { json in
                json.key("text"); json.string("quote \" backslash \\ newline \n tab \t bell \u{07} é 😀")
                json.key("edges"); json.string("\"starts and ends escaped\n")
                json.key("none"); json.string(nil)
                json.key("flag"); json.bool(true)
                json.key("count"); json.integer(-42)
                json.key("list"); json.strings(["a", "b"])
                json.key("empty"); json.array([Int]()) { _, _ in }
                json.key("nested"); json.object { inner in inner.key("k"); inner.bool(false) }
            }
        }
    }

    @Test func writesValidJSONThatFoundationReadsBack() throws {
        let bytes = JSONWriter.write(Sample())
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(object["text"] as? String == "quote \" backslash \\ newline \n tab \t bell \u{07} é 😀")
        #expect(object["edges"] as? String == "\"starts and ends escaped\n")
        #expect(object["none"] is NSNull)
        #expect(object["flag"] as? Bool == true)
        #expect(object["count"] as? Int == -42)
        #expect(object["list"] as? [String] == ["a", "b"])
        #expect((object["empty"] as? [Any])?.isEmpty == true)
        #expect((object["nested"] as? [String: Any])?["k"] as? Bool == false)
    }
}
