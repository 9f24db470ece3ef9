/// Text compared, ordered and hashed by its UTF-8 bytes, as SQL compares it (Swift's `String`
/// equates canonically equivalent text with different bytes, such as a composed and a decomposed
/// "é", which the databases keep apart): the key of a breakdown's values wherever they are
/// grouped or ordered in Swift, and, as a property wrapper (`@ExactText var event: String`), of
/// every key that holds a name or an id (a synthesized `Hashable` then compares the bytes).
@propertyWrapper
struct ExactText: Hashable, Comparable, Sendable {
    var text: String

    init(_ text: String) { self.text = text }

    init(wrappedValue: String) { text = wrappedValue }

    var wrappedValue: String {
        get { text }
        set { text = newValue }
    }

    static func == (left: Self, right: Self) -> Bool { left.text.utf8.elementsEqual(right.text.utf8) }

    /// By bytes: for text in composed form (NFC) the order of `String`'s `<`.
    static func < (left: Self, right: Self) -> Bool { left.text.utf8.lexicographicallyPrecedes(right.text.utf8) }

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        // A byte UTF-8 never holds ends the text, so that two keys that split the same bytes
        // differently between their fields ("ab", "c" and "a", "bc") hash apart.
        hasher.combine(0xFF as UInt8)
    }
}
