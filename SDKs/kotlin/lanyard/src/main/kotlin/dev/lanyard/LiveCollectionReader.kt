package dev.lanyard

/**
 * A collection's live changes ([LanyardCollection.changes]): catches up from the collection's own place by reading its
 * changes page by page, then takes its changes from the client's shared connection, passing over those at or before
 * that place (the catch-up may have read them already). The place (an integer, the collection cursor) is kept in the
 * client's store per account, so nothing is lost across launches and nothing comes twice.
 */
internal class LiveCollectionReader<T>(private val collection: LanyardCollection<T>) {
    private val client = collection.client
    private var account: String? = null
    private var position = 0L

    suspend fun run(emit: suspend (Change<T>) -> Unit) {
        while (true) {
            val user = client.currentUser?.id ?: throw LanyardException.NotSignedIn()
            account = user
            position = storedCursor()?.toLongOrNull() ?: 0
            // Watch the shared connection before reading the collection, so nothing committed meanwhile is missed.
            val watcher = client.liveFeed.watch(wholeFeed = false) { collection.scope.concerns(it, collection.name) }
            try {
                catchUp(emit)
                var otherAccount = false
                for (change in watcher.changes) {
                    if (client.currentUser?.id != user) {
                        otherAccount = true // another account now (a guest merged into it): start again from its place
                        break
                    }
                    when (change.kind) {
                        LiveChange.Kind.RECORD -> {
                            val place = change.collectionCursor?.toLongOrNull() ?: continue
                            if (place <= position) continue
                            position = place
                            emit(Change(change.id, change.version, change.updatedAt!!, collection.decodeValue(change), change.isDeleted))
                            // Stored once delivered: an app stopped mid-change gets it again on the next launch.
                            store(change.collectionCursor)
                        }
                        else -> return // the group left, read access gone, or no longer shared: nothing of it follows
                    }
                }
                if (!otherAccount) return // the shared connection ended: a newer stream of the account replaced it
            } catch (e: LanyardException.Network) {
                // This collector fell behind the shared connection: catch up again from its place.
            } finally {
                client.liveFeed.stopWatching(watcher)
            }
        }
    }

    /** Every page of the collection's own changes after its place. */
    private suspend fun catchUp(emit: suspend (Change<T>) -> Unit) {
        var cursor = storedCursor()
        do {
            val page = collection.page(cursor, 500)
            for (change in page.changes) emit(change)
            page.cursor?.let { store(it) }
            cursor = page.cursor
        } while (page.hasMore)
    }

    private val storageKey get() = "live.$account.${collection.scope.key}.${collection.name}"

    private fun storedCursor(): String? = client.sessionStore.read(storageKey)

    private fun store(cursor: String) {
        position = maxOf(position, cursor.toLongOrNull() ?: position)
        runCatching { client.sessionStore.write(storageKey, cursor) }
    }
}
