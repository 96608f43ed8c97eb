import Foundation
import LanyardCore
import LanyardServer
import LanyardSupport
import LanyardWire

/// A runtime on the configured database for one command, shut down afterwards; catalogue errors become one
/// readable line and exit status 1.
enum CommandRuntime {
    static let client = ClientInfo(ip: nil, userAgent: "lanyard-cli")

    /// Runs `body` on a runtime, then shuts it down: every database connection closed before the process ends.
    /// What `body` printed is written out first, so nothing that goes wrong in the shutdown can take it along.
    static func with(_ body: (LanyardRuntime) async throws -> Void) async throws {
        let configuration = try Startup.configuration()
        let runtime = try await Startup.runtime(configuration, logger: Startup.logger(configuration))
        do {
            try await body(runtime)
        } catch let error as LanyardError {
            fflush(nil)
            await runtime.shutdown()
            Startup.fail(error)
        } catch {
            fflush(nil)
            await runtime.shutdown()
            throw error
        }
        fflush(nil)
        await runtime.shutdown()
    }
}

/// Tables and JSON for the terminal.
enum Output {
    static func table(_ headers: [String], _ rows: [[String]], empty: String) {
        guard !rows.isEmpty else { return print(empty) }
        let widths = headers.indices.map { column in
            ([headers[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0
        }
        for row in [headers] + rows {
            print(row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
    }

    static func events(_ events: [AdminAuditEvent], newestFirst: Bool = true) {
        table(["TIME", "EVENT", "ACCOUNT", "IP", "DETAILS"], events.map { event in
            [time(event.at), event.type, event.userID ?? "", event.clientIP ?? "", details(event.details)]
        }, empty: "No audit events.")
    }

    static func details(_ text: JSONText?) -> String {
        guard let text, case .object(let members)? = try? JSONParser.parse(Array(text.text.utf8)) else { return "" }
        return members.keys.sorted().filter { $0 != "discarded_data" }.map { key in
            switch members[key] {
            case .string(let text)?: "\(key)=\(text)"
            case let other?: "\(key)=\(other)"
            case nil: key
            }
        }.joined(separator: " ")
    }

    static func status(disabled: Bool, anonymous: Bool) -> String {
        disabled ? "disabled" : (anonymous ? "guest" : "active")
    }

    static func time(_ date: Date) -> String {
        String(Timestamps.format(date).prefix(19)).replacingOccurrences(of: "T", with: " ")
    }

    static func encoder(pretty: Bool) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamps.format(date))
        }
        encoder.outputFormatting = pretty ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
                                          : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    static func json(_ value: some Encodable) throws {
        print(String(decoding: try encoder(pretty: true).encode(value), as: UTF8.self))
    }

    /// A value that writes its own JSON, pretty-printed.
    static func json(_ value: some JSONWritable) throws {
        let object = try JSONSerialization.jsonObject(with: Data(JSONWriter.write(value)))
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        print(String(decoding: data, as: UTF8.self))
    }

    static func jsonLine(_ value: some Encodable) throws {
        print(String(decoding: try encoder(pretty: false).encode(value), as: UTF8.self))
    }
}
