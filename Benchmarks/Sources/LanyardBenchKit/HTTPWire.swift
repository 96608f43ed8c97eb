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
        let head = String(decoding: buffer[0..<headEnd], as: UTF8.self)
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = UInt(statusParts[1]) else {
            return .malformed("bad status line: \(lines.first ?? "")")
        }
        var contentLength: Int?
        var chunked = false
        var closes = statusParts[0] == "HTTP/1.0"
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces).lowercased()
            switch name {
            case "content-length": contentLength = Int(value)
            case "transfer-encoding": chunked = value.contains("chunked")
            case "connection": closes = value.contains("close") ? true : (value.contains("keep-alive") ? false : closes)
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
            let sizeText = String(decoding: buffer[position..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
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
