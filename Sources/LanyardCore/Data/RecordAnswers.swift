import Foundation
import LanyardStore
import LanyardSupport
import LanyardWire

// Records and changes are answered as the wire types `DataRecord`, `DataChanges`, `ChangeRecord` and
// `ChangeFeedPage` (`LanyardWire/Records.swift`) of `JSONText`: the data is the JSON text stored when the record was
// written, copied into the answer as it is, so reading a record costs the same at any nesting. These are hot
// answers, written by hand (`JSONWriter`); `WireWriterTests` checks each writes what its `Codable` form does.

extension DataRecord where Value == JSONText {
    /// A stored record as the API shows it; `groupID` for a group's records.
    init(_ row: RecordRow, groupID: String? = nil) {
        self.init(id: row.recordID, collection: row.collection, version: Int(row.version), updatedAt: row.updatedAt,
                  deleted: row.deleted ? true : nil, data: row.data.map(JSONText.init), groupID: groupID,
                  createdBy: row.createdBy, updatedBy: row.updatedBy)
    }
}

extension DataRecord: JSONWritable where Value == JSONText {
    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("id"); json.string(id)
            if let collection { json.key("collection"); json.string(collection) }
            json.key("version"); json.integer(Int64(version))
            json.key("updated_at"); json.date(updatedAt)
            if deleted == true { json.key("deleted"); json.bool(true) }
            json.key("data"); json.raw(json: data?.text)
            if let groupID {
                json.key("group_id"); json.string(groupID)
                json.key("created_by"); json.string(createdBy)
                json.key("updated_by"); json.string(updatedBy)
            }
        }
    }
}

extension DataChanges: JSONWritable where Value == JSONText {
    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("records"); json.array(records) { $0.value($1) }
            json.key("next_cursor"); json.string(nextCursor)
            json.key("has_more"); json.bool(hasMore)
        }
    }
}

extension ChangeRecord: JSONWritable where Value == JSONText {
    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("collection"); json.string(collection)
            json.key("id"); json.string(id)
            if let collectionCursor { json.key("collection_cursor"); json.string(collectionCursor) }
            json.key("version"); json.integer(Int64(version))
            json.key("updated_at"); json.date(updatedAt)
            json.key("deleted"); json.bool(deleted)
            json.key("data"); json.raw(json: data?.text)
            json.key("group_id"); json.string(groupID)
            json.key("shared_by"); json.string(sharedBy)
            if groupID != nil, sharedBy == nil {
                json.key("created_by"); json.string(createdBy)
                json.key("updated_by"); json.string(updatedBy)
            }
        }
    }
}

extension ChangeFeedPage: JSONWritable where Value == JSONText {
    public func write(to writer: inout JSONWriter) {
        writer.object { json in
            json.key("changes"); json.array(changes) { $0.value($1) }
            json.key("next_cursor"); json.string(nextCursor)
            json.key("has_more"); json.bool(hasMore)
            json.key("removed_groups"); json.strings(removedGroups)
        }
    }
}
