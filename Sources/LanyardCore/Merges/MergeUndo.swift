import Foundation
import LanyardSupport

/// What a full merge moved, kept with it so that an operator can revert it within 30 days (reference section 15):
/// the identities that changed account, and each record with the version the merge left it at (a record changed
/// since stays where it is).
struct MergeUndo: Sendable, Equatable {
    struct Record: Sendable, Equatable {
        var collection: String
        var id: String
        var versionAfter: Int64
        /// Both accounts had it; whose version won (the other is among the merge's losers).
        var clash: Bool
        var absorbedWon: Bool
    }

    var identities: [String] = []
    var records: [Record] = []

    var json: String {
        var writer = JSONWriter()
        writer.object { json in
            json.key("identities"); json.strings(identities)
            json.key("records"); json.array(records) { json, record in
                json.object { entry in
                    entry.key("c"); entry.string(record.collection)
                    entry.key("id"); entry.string(record.id)
                    entry.key("v"); entry.integer(record.versionAfter)
                    entry.key("clash"); entry.bool(record.clash)
                    entry.key("absorbed_won"); entry.bool(record.absorbedWon)
                }
            }
        }
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    init() {}

    init?(json: String) {
        guard let object = JSONParser.parseObject(Array(json.utf8)),
              case .array(let identities)? = object["identities"], case .array(let records)? = object["records"] else {
            return nil
        }
        self.identities = identities.compactMap(\.stringValue)
        self.records = records.compactMap { value in
            guard case .object(let entry) = value, let collection = entry["c"]?.stringValue, let id = entry["id"]?.stringValue,
                  let version = entry["v"]?.numberValue, case .bool(let clash)? = entry["clash"],
                  case .bool(let absorbedWon)? = entry["absorbed_won"] else { return nil }
            return Record(collection: collection, id: id, versionAfter: Int64(version), clash: clash, absorbedWon: absorbedWon)
        }
    }
}
