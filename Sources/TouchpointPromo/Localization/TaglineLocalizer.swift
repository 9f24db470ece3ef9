import Foundation

/// Picks the text a user reads from texts keyed by language tag.
///
/// The order, first match wins:
/// 1. the user's locale, then each shorter form of it: `zh-Hant-TW`, `zh-Hant`, `zh`;
/// 2. another region of the same language (`pt-BR` for a `pt-PT` user), the smallest such key;
/// 3. English: `en`, else the smallest `en-…` key;
/// 4. any: the smallest key.
///
/// Tags are compared without regard to case or to `-` versus `_`, and a POSIX suffix
/// (`ko_KR.UTF-8`, `de_DE@euro`) is ignored, so `Locale.identifier`, `Locale.preferredLanguages`
/// and `$LANG` values all work. "Smallest" is by the normalized tag, then by the key as
/// written, so the choice never depends on dictionary order.
///
/// ```swift
/// TaglineLocalizer.text(in: ["en": "Hello", "pt": "Olá"], for: "pt-BR")  // "Olá"
/// ```
public enum TaglineLocalizer {
    /// The key of `texts` a user with `locale` reads, or nil when `keys` is empty.
    /// - Parameters:
    ///   - locale: the user's language tag or locale identifier.
    ///   - keys: the available language tags.
    /// - Returns: one of `keys`.
    public static func bestKey(for locale: String, among keys: some Collection<String>) -> String? {
        guard !keys.isEmpty else { return nil }
        // Sorted once by (normalized, raw): the first match of each step is its smallest.
        let candidates = keys.map { (normalized: normalize($0), key: $0) }
            .sorted { ($0.normalized, $0.key) < ($1.normalized, $1.key) }
        let wanted = normalize(locale)
        if !wanted.isEmpty {
            var subtags = wanted.split(separator: "-", omittingEmptySubsequences: true).map(String.init)
            while !subtags.isEmpty {
                let tag = subtags.joined(separator: "-")
                if let match = candidates.first(where: { $0.normalized == tag }) { return match.key }
                subtags.removeLast()
            }
            let wantedLanguage = language(of: wanted)
            if let match = candidates.first(where: { language(of: $0.normalized) == wantedLanguage }) {
                return match.key
            }
        }
        if let english = candidates.first(where: { $0.normalized == "en" })
            ?? candidates.first(where: { language(of: $0.normalized) == "en" })
        {
            return english.key
        }
        return candidates.first?.key
    }

    /// The text of `texts` a user with `locale` reads.
    /// - Parameters:
    ///   - texts: texts by language tag, e.g. a catalog app's `tagline`.
    ///   - locale: the user's language tag or locale identifier.
    /// - Returns: the chosen text, or nil when `texts` is empty.
    public static func text(in texts: [String: String], for locale: String) -> String? {
        bestKey(for: locale, among: texts.keys).flatMap { texts[$0] }
    }

    /// `pt_BR.UTF-8` → `pt-br`; `de_DE@euro` → `de-de`.
    static func normalize(_ tag: String) -> String {
        var text = Substring(tag)
        if let cut = text.firstIndex(where: { $0 == "." || $0 == "@" }) { text = text[..<cut] }
        return String(text).lowercased().replacingOccurrences(of: "_", with: "-")
    }

    private static func language(of normalized: String) -> Substring {
        normalized.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }
}
