import Foundation

/// Places where a test holds the server for good, to kill it at a known point: `LANYARD_TEST_PAUSE_AT`, a comma
/// list of names, honoured only in dev mode. A request that reaches one writes `lanyard: paused at NAME` to
/// standard error and waits there until its task is cancelled; nothing else changes.
public struct PausePoints: Sendable, Equatable {
    public enum Point: String, Sendable, CaseIterable {
        /// Inside a merge's transaction, every write sent to the database, before the commit.
        case mergeBeforeCommit = "merge.before_commit"
        /// A merge committed, its answer not yet sent.
        case mergeAfterCommit = "merge.after_commit"
    }

    public static let none = PausePoints(points: [])

    let points: Set<Point>

    public init(points: Set<Point>) {
        self.points = points
    }

    public func contains(_ point: Point) -> Bool { points.contains(point) }

    /// Holds the caller at `point` when it is configured; returns at once otherwise.
    public func reach(_ point: Point) async {
        guard points.contains(point) else { return }
        var line = "lanyard: paused at \(point.rawValue)\n"
        // `write(2)`, not `FileHandle.write`: a closed standard error must not stop the server.
        _ = line.withUTF8 { Foundation.write(STDERR_FILENO, $0.baseAddress, $0.count) }
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
    }
}
