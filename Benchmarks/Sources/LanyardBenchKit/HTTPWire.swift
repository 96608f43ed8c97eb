import Foundation

/// HTTP/1.1 on the wire, as little as the load generator needs: requests written as bytes, answers read
/// with `Content-Length`, chunked bodies, or a body that ends when the server closes the connection.
public enum HTTPWire {
    public static func requestBytes(_ request: BenchRequest, host: String) -> [UInt8] {
        var head = "\(request.method.rawValue) \(request.path) HTTP/1.1\r\nHost: \(host)\r\n"
        for (name, value) in request.headers { head += "\(name): \(value)\r\n" }
        if let body = request.body {
            head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
            return Array(head.utf8) + body
        }
        head += "\r\n"
        return Array(head.utf8)
    }

    public struct Response: Equatable, Sendable {
        public var status: UInt
        public var body: [UInt8]
        /// The server will close the connection after this answer.
        public var closes: Bool

        public init(status: UInt, body: [UInt8], closes: Bool) {
            self.status = status
            self.body = body
            self.closes = closes
        }
    }

    public enum ParseResult: Equatable, Sendable {
        case incomplete
        /// A full answer, and how many bytes of the buffer it used.
        case complete(Response, consumed: Int)
        case malformed(String)
    }

    /// Parses one answer from the start of `buffer`. With `atEOF`, a body without a length ends here.
    public static func parse(_ buffer: [UInt8], atEOF: Bool) -> ParseResult {
        guard let headEnd = find([13, 10, 13, 10], in: buffer, from: 0) else {
            return atEOF ? .malformed("connection closed before the answer's head") : .incomplete
        }
        // The head is read as bytes: Character-based `String` splitting cost a fifth of the load generator's CPU.
        let statusEnd = find([13, 10], in: buffer, from: 0) ?? headEnd
        let statusLine = buffer[0..<statusEnd]
        guard let status = statusCode(of: statusLine) else {
            return .malformed("bad status line: \(String(decoding: statusLine, as: UTF8.self))")
        }
        var contentLength: Int?
        var chunked = false
        var closes = statusLine.starts(with: http10)
        var lineStart = statusEnd + 2
        while lineStart < headEnd {
            let lineEnd = find([13, 10], in: buffer, from: lineStart) ?? headEnd
            defer { lineStart = lineEnd + 2 }
            guard let colon = buffer[lineStart..<lineEnd].firstIndex(of: UInt8(ascii: ":")) else { continue }
            let value = buffer[(colon + 1)..<lineEnd]
            switch lowercased(buffer[lineStart..<colon]) {
            case contentLengthName: contentLength = number(value, radix: 10)
            case transferEncodingName: chunked = contains(chunkedToken, in: value)
            case connectionName:
                if contains(closeToken, in: value) { closes = true }
                else if contains(keepAliveToken, in: value) { closes = false }
            default: break
            }
        }
        let bodyStart = headEnd + 4
        if chunked {
            return parseChunked(buffer, from: bodyStart, status: status, closes: closes)
        }
        if let contentLength {
            guard buffer.count - bodyStart >= contentLength else { return .incomplete }
            return .complete(Response(status: status, body: Array(buffer[bodyStart..<bodyStart + contentLength]), closes: closes),
                             consumed: bodyStart + contentLength)
        }
        guard atEOF else { return .incomplete }
        return .complete(Response(status: status, body: Array(buffer[bodyStart...]), closes: true), consumed: buffer.count)
    }

    private static func parseChunked(_ buffer: [UInt8], from start: Int, status: UInt, closes: Bool) -> ParseResult {
        var body: [UInt8] = []
        var position = start
        while true {
            guard let lineEnd = find([13, 10], in: buffer, from: position) else { return .incomplete }
            // Chunk extensions (after `;`) are ignored.
            guard let size = number(buffer[position..<lineEnd].prefix { $0 != UInt8(ascii: ";") }, radix: 16) else {
                return .malformed("bad chunk size")
            }
            position = lineEnd + 2
            if size == 0 {
                // Trailers (none expected) end with an empty line.
                guard let end = find([13, 10], in: buffer, from: position) else { return .incomplete }
                return .complete(Response(status: status, body: body, closes: closes), consumed: end + 2)
            }
            guard buffer.count >= position + size + 2 else { return .incomplete }
            body += buffer[position..<position + size]
            position += size + 2
        }
    }

    private static let http1 = Array("HTTP/1.".utf8)
    private static let http10 = Array("HTTP/1.0".utf8)
    private static let contentLengthName = Array("content-length".utf8)
    private static let transferEncodingName = Array("transfer-encoding".utf8)
    private static let connectionName = Array("connection".utf8)
    private static let chunkedToken = Array("chunked".utf8)
    private static let closeToken = Array("close".utf8)
    private static let keepAliveToken = Array("keep-alive".utf8)

    /// `HTTP/1.x NNN …` → NNN.
    private static func statusCode(of line: ArraySlice<UInt8>) -> UInt? {
        guard line.starts(with: http1), let space = line.firstIndex(of: 32) else { return nil }
        let digits = line[(space + 1)...].prefix { $0 != 32 }
        guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return digits.reduce(0) { $0 * 10 + UInt($1 - 48) }
    }

    /// The number in `bytes`, between optional spaces and tabs (HTTP's optional whitespace).
    private static func number(_ bytes: ArraySlice<UInt8>, radix: Int) -> Int? {
        let isSpace = { (byte: UInt8) in byte == 32 || byte == 9 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return nil
        }
        return Int(String(decoding: bytes[first...last], as: UTF8.self), radix: radix)
    }

    private static func lowercased(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        bytes.map { (65...90).contains($0) ? $0 + 32 : $0 }
    }

    /// Whether a header value names `token` (lowercase), in any case.
    private static func contains(_ token: [UInt8], in value: ArraySlice<UInt8>) -> Bool {
        find(token, in: lowercased(value), from: 0) != nil
    }

    static func find(_ needle: [UInt8], in buffer: [UInt8], from start: Int) -> Int? {
        guard buffer.count >= needle.count else { return nil }
        var index = start
        while index <= buffer.count - needle.count {
            if buffer[index] == needle[0] {
                var match = true
                for offset in 1..<needle.count where buffer[index + offset] != needle[offset] {
                    match = false
                    break
                }
                if match { return index }
            }
            index += 1
        }
        return nil
    }
}
