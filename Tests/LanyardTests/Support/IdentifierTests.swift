import Foundation
import Testing
@testable import LanyardCore
@testable import LanyardProviders
@testable import LanyardServer
import LanyardStore
@testable import LanyardSupport

@Suite struct NewIDTests {
    @Test func newIDsAreVersion7UUIDsCarryingTheirMillisecond() throws {
        let date = Date(timeIntervalSince1970: 1_795_000_000.5)
        let id = SystemRandomSource().newID(at: date)
        let characters = Array(id)
        #expect(UUID(uuidString: id) != nil && id == id.lowercased())
        #expect(characters[14] == "7")
        #expect("89ab".contains(characters[19]))
        // The first 48 bits are the Unix time in milliseconds (RFC 9562).
        #expect(id.hasPrefix("01a1ee56-5ff4-7"))
        let hex = id.replacingOccurrences(of: "-", with: "").prefix(12)
        #expect(UInt64(hex, radix: 16) == 1_795_000_000_500)
    }

    @Test func idTextIsFoundationsUUIDTextInLowerCase() {
        let random = SystemRandomSource()
        for _ in 0..<500 {
            let raw = random.bytes(16)
            let foundation = UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                                         raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
            #expect(UUIDText.lowercase(raw) == foundation.uuidString.lowercased())
            #expect(UUIDText.bytes(foundation.uuidString) == raw)
            #expect(UUIDText.bytes(foundation.uuidString.lowercased()) == raw)
        }
    }

    @Test(arguments: ["", "019a5f3c7b2e7d419c3e5a1b2c3d4e5f", "019a5f3c-7b2e-7d41-9c3e-5a1b2c3d4e5", "019a5f3c-7b2e-7d41-9c3e-5a1b2c3d4e5f0",
                      "019a5f3c-7b2e-7d41-9c3e_5a1b2c3d4e5f", "019a5f3g-7b2e-7d41-9c3e-5a1b2c3d4e5f", "019a5f3c-7b2e-7d41-9c3e-5a1b2c3d4e5é"])
    func textThatIsNotAUUIDHasNoBytes(text: String) {
        #expect(UUIDText.bytes(text) == nil)
    }

    @Test func randomBytesComeInTheCountAskedForAndDiffer() {
        let random = SystemRandomSource()
        for count in [0, 1, 7, 8, 16, 32, 33, 300] {
            #expect(random.bytes(count).count == count)
        }
        let draws = (0..<200).map { _ in random.bytes(16) }
        #expect(Set(draws).count == draws.count)
        // Every bit position takes both values across the draws: no byte is left unfilled.
        for index in 0..<16 {
            #expect(draws.reduce(0) { $0 | $1[index] } == 0xFF && draws.reduce(0xFF) { $0 & $1[index] } == 0)
        }
    }

    @Test func laterIDsSortAfterEarlierOnesAndNeverRepeat() {
        let random = SystemRandomSource()
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        let ids = (0..<1000).map { random.newID(at: start.addingTimeInterval(Double($0) / 64)) }
        #expect(ids == ids.sorted())
        let sameMillisecond = (0..<1000).map { _ in random.newID(at: start) }
        #expect(Set(sameMillisecond).count == 1000)
    }
}
