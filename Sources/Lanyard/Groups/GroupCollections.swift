import Foundation

extension LanyardGroups {
    /// One of a group's collections, typed: the same `LanyardCollection` as the account's own, with each record's
    /// author. Who may read and write it is the collection's policy (`setPolicy(_:for:in:)`).
    ///
    /// ```swift
    /// struct Item: Codable, Sendable { var name: String; var done = false }
    /// let shopping = client.groups.collection("shopping", of: Item.self, in: family.id)
    /// try await shopping.put(Item(name: "Milk"), id: "milk")
    /// ```
    public func collection<Record: Codable & Sendable>(_ name: String, of type: Record.Type,
                                                       in groupID: LanyardGroup.ID) -> LanyardCollection<Record> {
        LanyardCollection(client: client, name: name, scope: .group(groupID))
    }

    /// A collection another member shares with the group: read-only (writes throw `.forbidden`), gone
    /// (`.notFound`) once unshared.
    ///
    /// ```swift
    /// let places = client.groups.sharedCollection("locations", of: Place.self, by: child.userID, in: family.id)
    /// let latest = try await places.get("now")
    /// ```
    public func sharedCollection<Record: Codable & Sendable>(_ name: String, of type: Record.Type, by userID: User.ID,
                                                             in groupID: LanyardGroup.ID) -> LanyardCollection<Record> {
        LanyardCollection(client: client, name: name, scope: .shared(group: groupID, member: userID))
    }
}
