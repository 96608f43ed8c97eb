import Foundation
import LanyardBenchKit
import Testing

/// The load generator's pure parts: how it reads answers off the wire and how it turns latencies into
/// percentiles. A mistake here would misreport every benchmark.
@Suite struct LoadGeneratorRulesTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func anAnswerWithContentLengthEndsWhereItSays() {
        let wire = bytes("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhelloHTTP/1.1 204")
        #expect(HTTPWire.parse(wire, atEOF: false)
            == .complete(.init(status: 200, body: bytes("hello"), closes: false), consumed: wire.count - 12))
    }

    @Test func aPartlyReceivedAnswerWaitsForTheRest() {
        #expect(HTTPWire.parse(bytes("HTTP/1.1 200 OK\r\nContent-Len"), atEOF: false) == .incomplete)
        #expect(HTTPWire.parse(bytes("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello"), atEOF: false) == .incomplete)
    }

    @Test func chunkedBodiesAreJoinedAndTheirEndFound() {
        let wire = bytes("HTTP/1.1 401 Unauthorized\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n9;ext=1\r\n:1234567}\r\n0\r\n\r\n")
        #expect(HTTPWire.parse(wire, atEOF: false)
            == .complete(.init(status: 401, body: bytes("{\"a\":1234567}"), closes: false), consumed: wire.count))
        // The last chunk not in yet.
        #expect(HTTPWire.parse(Array(wire.dropLast(5)), atEOF: false) == .incomplete)
    }

    @Test func closingTheConnectionIsNoticed() {
        let told = HTTPWire.parse(bytes("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"), atEOF: false)
        #expect(told == .complete(.init(status: 200, body: [], closes: true), consumed: 57))
        let old = HTTPWire.parse(bytes("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"), atEOF: false)
        #expect(old == .complete(.init(status: 200, body: [], closes: true), consumed: 38))
        // No length: the body is whatever came before the server closed.
        let unbounded = bytes("HTTP/1.1 200 OK\r\n\r\nall of it")
        #expect(HTTPWire.parse(unbounded, atEOF: false) == .incomplete)
        #expect(HTTPWire.parse(unbounded, atEOF: true)
            == .complete(.init(status: 200, body: bytes("all of it"), closes: true), consumed: unbounded.count))
    }

    @Test func headerNamesAndValuesAreReadInAnyCaseAndSpacing() {
        let wire = bytes("HTTP/1.1 200 OK\r\nCONTENT-LENGTH: \t 3 \r\nconnection: Keep-Alive\r\n\r\nabc")
        #expect(HTTPWire.parse(wire, atEOF: false)
            == .complete(.init(status: 200, body: bytes("abc"), closes: false), consumed: wire.count))
        let chunked = bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\nConnection: CLOSE\r\n\r\n 2 \r\nhi\r\n0\r\n\r\n")
        #expect(HTTPWire.parse(chunked, atEOF: false)
            == .complete(.init(status: 200, body: bytes("hi"), closes: true), consumed: chunked.count))
    }

    @Test func garbageIsAnErrorNotAHang() {
        #expect(HTTPWire.parse(bytes("SSH-2.0-OpenSSH\r\n\r\n"), atEOF: false) == .malformed("bad status line: SSH-2.0-OpenSSH"))
        #expect(HTTPWire.parse(bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), atEOF: false)
            == .malformed("bad chunk size"))
        #expect(HTTPWire.parse(bytes("HTTP/1.1 200"), atEOF: true) == .malformed("connection closed before the answer's head"))
        #expect(HTTPWire.parse(bytes("HTTP/1.1 2x0 OK\r\n\r\n"), atEOF: false) == .malformed("bad status line: HTTP/1.1 2x0 OK"))
        #expect(HTTPWire.parse(bytes("HTTP/1.1\r\n\r\n"), atEOF: false) == .malformed("bad status line: HTTP/1.1"))
    }

    @Test func requestsCarryTheirBodyLength() {
        let request = BenchRequest(method: .POST, path: "/v1/auth/refresh", headers: [("Authorization", "Bearer t")],
                                   body: bytes("{\"refresh_token\":\"é\"}"))
        let text = String(decoding: HTTPWire.requestBytes(request, host: "127.0.0.1:8711"), as: UTF8.self)
        #expect(text == "POST /v1/auth/refresh HTTP/1.1\r\nHost: 127.0.0.1:8711\r\nAuthorization: Bearer t\r\n"
            + "Content-Type: application/json\r\nContent-Length: 22\r\n\r\n{\"refresh_token\":\"é\"}")
    }

    @Test func percentilesAreNearestRank() {
        let thousand = (1...1000).map(Double.init)
        #expect(LoadGenerator.percentile(50, ofSorted: thousand) == 500)
        #expect(LoadGenerator.percentile(99, ofSorted: thousand) == 990)
        #expect(LoadGenerator.percentile(99.9, ofSorted: thousand) == 999)
        #expect(LoadGenerator.percentile(100, ofSorted: thousand) == 1000)
        // With few samples the tail is the slowest one, not an interpolation below it.
        #expect(LoadGenerator.percentile(99, ofSorted: [1, 2, 3]) == 3)
        #expect(LoadGenerator.percentile(50, ofSorted: [7]) == 7)
        #expect(LoadGenerator.percentile(50, ofSorted: []).isNaN)
    }

    @Test func cpuTimeOfAProcessIsReadFromProc() throws {
        let before = ProcFS.cpuTimes(of: [getpid()])
        #expect(before[getpid()] != nil)
        // Spin on this thread until the process's CPU time, as read, has grown by 50 ms: it must, and well
        // within a few seconds, however busy the machine is.
        let start = ContinuousClock.now
        var spent = 0.0
        var spin: UInt64 = 0
        while spent < 0.05 && ContinuousClock.now - start < .seconds(5) {
            for _ in 0..<100_000 { spin &+= 1 }
            spent = ProcFS.cpuSeconds(from: before, to: ProcFS.cpuTimes(of: [getpid()])) ?? 0
        }
        #expect(spin > 0)
        #expect(spent >= 0.05)
        #expect(ProcFS.cpuTimes(of: [Int32.max]).isEmpty)
    }

    @Test func aPhasesCPUIsWhatItsLiveProcessesSpentInIt() {
        // 10 and 11 ran throughout; 20 started during the phase, so all its time is the phase's; 30 ended
        // during it, and its time before the phase must not be taken away.
        let before: [Int32: Double] = [10: 5.0, 11: 1.0, 30: 9.0]
        let after: [Int32: Double] = [10: 5.5, 11: 1.25, 20: 0.5]
        #expect(ProcFS.cpuSeconds(from: before, to: after) == 1.25)
        #expect(ProcFS.cpuSeconds(from: [30: 9.0], to: [:]) == nil)
    }

    @Test func onlyAPairedRoundsResultsCarryTheirRound() throws {
        // `report.py` tells the sweep from the paired rounds by this key alone.
        let sweepLine = #"{"scenario":"me","target":"lanyard","database":"sqlite","concurrency":64,"sent":10,"ok":10,"errors":0,"elapsed_seconds":1,"requests_per_second":10,"p50_milliseconds":1,"p99_milliseconds":2,"p999_milliseconds":3,"max_milliseconds":4,"first_errors":[]}"#
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        func written(_ result: PhaseResult) throws -> [String: Any] {
            try #require(JSONSerialization.jsonObject(with: encoder.encode(result)) as? [String: Any])
        }
        var result = try decoder.decode(PhaseResult.self, from: Data(sweepLine.utf8))
        #expect(result.round == nil)
        #expect(try written(result)["round"] == nil)
        #expect(!result.line.hasPrefix("round"))

        result.round = 2
        #expect(try written(result)["round"] as? Int == 2)
        #expect(result.line.hasPrefix("round 2: lanyard me sqlite c=64: 10 req/s"))
    }
}
