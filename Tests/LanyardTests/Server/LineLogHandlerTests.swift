import Foundation
import LanyardServer
import Logging
import Synchronization
import Testing

/// What a log handler under test wrote, line by line.
final class CapturedLog: Sendable {
    private let written = Mutex<[String]>([])

    var lines: [String] { written.withLock { $0 } }

    func logger(label: String = "lanyard", level: Logger.Level = .info) -> Logger {
        var logger = Logger(label: label) { label in
            LineLogHandler(label: label, metadataProvider: nil) { line in self.written.withLock { $0.append(line) } }
        }
        logger.logLevel = level
        return logger
    }
}

@Suite struct LineLogHandlerTests {
    /// The line without its timestamp (local time, to the second), which is checked on its own.
    private func untimed(_ line: String) throws -> String {
        let space = try #require(line.firstIndex(of: " "))
        let time = line[..<space]
        #expect(time.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}/) != nil, "timestamp: \(time)")
        return String(line[line.index(after: space)...])
    }

    @Test func writesOneLineWithItsMetadataSortedAfterTheLabel() throws {
        let log = CapturedLog()
        var logger = log.logger()
        logger[metadataKey: "request_id"] = "r1"
        logger[metadataKey: "hb.request.id"] = "h1"
        logger.info("request", metadata: ["status": "200", "method": "GET"], source: "LanyardServer")
        #expect(log.lines.count == 1)
        #expect(try untimed(log.lines[0]) == "info lanyard: hb.request.id=h1 method=GET request_id=r1 status=200 [LanyardServer] request\n")
    }

    @Test func aLinesOwnMetadataWinsAndTheLoggersStaysAsItWas() throws {
        let log = CapturedLog()
        var logger = log.logger()
        logger[metadataKey: "route"] = "/v1/users/me"
        logger.warning("moved", metadata: ["route": "/v1/auth/refresh"], source: "test")
        logger.warning("again", source: "test")
        #expect(try log.lines.map(untimed) == [
            "warning lanyard: route=/v1/auth/refresh [test] moved\n",
            "warning lanyard: route=/v1/users/me [test] again\n",
        ])
    }

    @Test func nothingBelowTheLevelAndNoMetadataNoSpaceBeforeTheSource() throws {
        let log = CapturedLog()
        let logger = log.logger(level: .warning)
        logger.info("quiet", source: "test")
        logger.debug("quieter", source: "test")
        logger.error("loud", source: "test")
        #expect(try log.lines.map(untimed) == ["error lanyard: [test] loud\n"])
    }

    @Test func aCopysMetadataIsItsOwn() throws {
        let log = CapturedLog()
        let base = log.logger()
        var request = base
        request[metadataKey: "request_id"] = "r2"
        base.info("base", source: "test")
        request.info("request", source: "test")
        #expect(try log.lines.map(untimed) == ["info lanyard: [test] base\n", "info lanyard: request_id=r2 [test] request\n"])
    }
}
