import Foundation
import LanyardWire

// A merge's answer is the wire type `MergeResult` (`LanyardWire/Merges.swift`); it is kept with the merge as JSON,
// so that a retried request is answered exactly as the first was.
extension MergeResult {
    /// The report as stored with the merge, without the session.
    var stored: String {
        var copy = self
        copy.session = nil
        return (try? String(decoding: WireCoding.encoder().encode(copy), as: UTF8.self)) ?? "{}"
    }

    /// The report a merge stored, as it was answered.
    init?(stored text: String) {
        guard let report = try? WireCoding.decoder().decode(MergeResult.self, from: Data(text.utf8)) else { return nil }
        self = report
    }
}
