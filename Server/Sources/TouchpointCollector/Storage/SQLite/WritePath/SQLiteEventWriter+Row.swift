import TouchpointCore

extension SQLiteEventWriter {
    /// One event to store, for `source`, with what the writer looks it up by worked out on the
    /// request's task (its payload compacted, its message key, session and person hashed, its ids
    /// packed), not on the writer's thread.
    ///
    /// A class: a write passes each row through several arrays (the request's, the group's first
    /// copies, the rollups), and a reference is one retain where the message's strings were one each.
    final class Row: EventRow, Sendable {
        let source: String
        let message: IngestMessage
        /// The payload as stored: without the members the columns hold (``StoredPayload``), with
        /// the context's shareable members set apart (``SharedContexts``), and
        /// ``StoredPayload/Lifted/derivedTime`` when `original_timestamp` need not be kept.
        let stored: StoredPayload.Compacted
        /// The hash of `stored.sharedContext`.
        let sharedContextHash: Int
        /// The message's key in ``MessageKeyIndex``, once for the reader that reads ahead and the
        /// writer's lookup.
        let messageKey: Int64
        /// The message id packed as SQLite keeps it (nil: not a UUID, kept as text).
        let packedMessageId: PackedID.Bytes?
        /// The message's session (nil: it has no session id).
        let session: SessionRollup.Key?
        /// The session id packed as SQLite keeps it (nil: none, or not a UUID).
        let packedSessionId: PackedID.Bytes?
        /// The message's person and whether that is its user id (``PersonKeys/person(source:message:)``).
        let person: (person: PersonKeys.Person, isUser: Bool)?
        /// What the message adds to its source's definitions (nil: nothing; ``DefinitionCounts``).
        let definitions: DefinitionCounts.Shape?

        /// - Parameter key: the store's key function (``MessageKeyIndex/key``). SQLite keeps shared
        ///   contexts, leaves out an original timestamp it can work out, and keeps a payload that is
        ///   only `properties` as that object.
        init(source: String, message: IngestMessage, keyedBy key: MessageKeyIndex.KeyFunction) {
            self.source = source
            self.message = message
            messageKey = key(source, message.messageId)
            var stored = StoredPayload.compact(
                message.payload, columns: StoredPayload.Columns(message), shareContext: true, unwrapProperties: true)
            if StoredPayload.derivesOriginalTimestamp(message) { stored.lifted.insert(.derivedTime) }
            self.stored = stored
            sharedContextHash = stored.sharedContext?.hashValue ?? 0
            packedMessageId = PackedID.Bytes(message.messageId)
            session = message.sessionId.map { SessionRollup.Key(source: source, id: $0) }
            packedSessionId = message.sessionId.flatMap(PackedID.Bytes.init)
            person = PersonKeys.person(source: source, message: message)
            definitions = DefinitionCounts.Shape(
                source: source, message: message, keys: PropertyKeyReader.definedKeys(of: message))
        }
    }
}
