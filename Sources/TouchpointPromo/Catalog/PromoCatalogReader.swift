import Foundation
import TouchpointCore

/// One walk over a catalog document that keeps what is valid and reports the rest, so the
/// lenient loader and the validator can never disagree.
struct PromoCatalogReader {
    private(set) var problems: [JSONProblem] = []

    mutating func read(_ json: JSONValue) throws(JSONProblem) -> PromoCatalog {
        guard case .object(let root) = json else {
            throw JSONProblem(path: .root, message: "expected an object with an \"apps\" array, got \(json.typeName)")
        }
        let appsPath = JSONPath.root.appending("apps")
        guard let appsValue = root["apps"] else { throw JSONProblem(path: appsPath, message: "required") }
        guard case .array(let entries) = appsValue else {
            throw JSONProblem(path: appsPath, message: "expected an array, got \(appsValue.typeName)")
        }

        var apps: [PromoApp] = []
        var firstIndexByID: [String: Int] = [:]
        for (index, entry) in entries.enumerated() {
            let path = appsPath.appending(index: index)
            let app = readApp(entry, at: path)
            // Every id in the document counts as known to the rules, even on a skipped entry.
            guard let id = entry["id"]?.stringValue, !id.isEmpty else { continue }
            if let first = firstIndexByID[id] {
                report(path.appending("id"), "duplicate id \(quoted(id)), first at apps[\(first)]")
                continue
            }
            firstIndexByID[id] = index
            if let app { apps.append(app) }
        }

        let rules = readRules(root["promoRules"], known: firstIndexByID)
        let maxApps = readMaxApps(root["maxApps"])
        return PromoCatalog(apps: apps, promoRules: rules, maxApps: maxApps, problems: problems)
    }

    // MARK: Apps

    /// The app at `path`, or nil (with its problems reported) when it breaks a rule.
    private mutating func readApp(_ entry: JSONValue, at path: JSONPath) -> PromoApp? {
        guard case .object(let fields) = entry else {
            report(path, "expected an object, got \(entry.typeName)")
            return nil
        }
        let before = problems.count
        let id = nonEmptyString(fields["id"], at: path.appending("id"))
        let name = nonEmptyString(fields["name"], at: path.appending("name"))
        let appStoreID = readAppStoreID(fields["appStoreID"], at: path.appending("appStoreID"))
        let iconURL = readIconURL(fields["iconURL"], at: path.appending("iconURL"))
        let category = nonEmptyString(fields["category"], at: path.appending("category"))
        let tagline = readTagline(fields["tagline"], at: path.appending("tagline"))
        let weight = readWeight(fields["weight"], at: path.appending("weight"))
        guard problems.count == before, let id, let name, let appStoreID, let iconURL, let category, let tagline
        else { return nil }
        return PromoApp(
            id: id, name: name, appStoreID: appStoreID, iconURL: iconURL, category: category, tagline: tagline,
            weight: weight)
    }

    private mutating func string(_ value: JSONValue?, at path: JSONPath) -> String? {
        guard let value else {
            report(path, "required")
            return nil
        }
        guard case .string(let text) = value else {
            report(path, "expected a string, got \(value.typeName)")
            return nil
        }
        return text
    }

    private mutating func nonEmptyString(_ value: JSONValue?, at path: JSONPath) -> String? {
        guard let text = string(value, at: path) else { return nil }
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            report(path, "must not be empty")
            return nil
        }
        return text
    }

    private mutating func readAppStoreID(_ value: JSONValue?, at path: JSONPath) -> String? {
        guard let text = string(value, at: path) else { return nil }
        guard !text.isEmpty, text.count <= 20, text.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) else {
            report(path, "must be the App Store's numeric id (digits only), got \(quoted(text))")
            return nil
        }
        return text
    }

    private mutating func readIconURL(_ value: JSONValue?, at path: JSONPath) -> URL? {
        guard let text = string(value, at: path) else { return nil }
        guard let url = URL(string: text), url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty
        else {
            report(path, "must be an https URL")
            return nil
        }
        return url
    }

    private mutating func readTagline(_ value: JSONValue?, at path: JSONPath) -> [String: String]? {
        guard let value else {
            report(path, "required")
            return nil
        }
        guard case .object(let members) = value else {
            report(path, "expected an object of texts by language, got \(value.typeName)")
            return nil
        }
        guard !members.isEmpty else {
            report(path, "must have at least one language")
            return nil
        }
        var texts: [String: String] = [:]
        var valid = true
        for key in members.keys.sorted() {
            let keyPath = path.appending(key)
            guard Self.isLanguageTag(key) else {
                report(keyPath, "not a language tag (e.g. \"en\", \"pt-BR\")")
                valid = false
                continue
            }
            guard let text = nonEmptyString(members[key], at: keyPath) else {
                valid = false
                continue
            }
            texts[key] = text
        }
        return valid ? texts : nil
    }

    private mutating func readWeight(_ value: JSONValue?, at path: JSONPath) -> Double? {
        guard let value, !value.isNull else { return nil }
        guard let number = value.doubleValue, number.isFinite, number >= 0 else {
            report(path, "must be a number ≥ 0, got \(describe(value))")
            return nil
        }
        return number
    }

    // MARK: Catalog-wide settings

    /// The rules, with non-string entries dropped. A rule that is not an array becomes an empty
    /// list: when the owner's intent is unreadable, the app promotes nothing rather than everything.
    private mutating func readRules(_ value: JSONValue?, known: [String: Int]) -> [String: [String]] {
        guard let value, !value.isNull else { return [:] }
        let path = JSONPath.root.appending("promoRules")
        guard case .object(let members) = value else {
            report(path, "expected an object of app id → list of app ids, got \(value.typeName)")
            return [:]
        }
        var rules: [String: [String]] = [:]
        for key in members.keys.sorted() {
            let rulePath = path.appending(key)
            if known[key] == nil { report(rulePath, "unknown app id \(quoted(key))") }
            guard case .array(let targets) = members[key]! else {
                report(rulePath, "expected an array of app ids, got \(members[key]!.typeName)")
                rules[key] = []
                continue
            }
            var ids: [String] = []
            for (index, target) in targets.enumerated() {
                let targetPath = rulePath.appending(index: index)
                guard case .string(let id) = target else {
                    report(targetPath, "expected an app id (a string), got \(target.typeName)")
                    continue
                }
                if known[id] == nil { report(targetPath, "unknown app id \(quoted(id))") }
                ids.append(id)
            }
            rules[key] = ids
        }
        return rules
    }

    private mutating func readMaxApps(_ value: JSONValue?) -> Int? {
        guard let value, !value.isNull else { return nil }
        guard let count = value.intValue, count >= 0 else {
            report(JSONPath.root.appending("maxApps"), "must be an integer ≥ 0, got \(describe(value))")
            return nil
        }
        return count
    }

    // MARK: Helpers

    private mutating func report(_ path: JSONPath, _ message: String) {
        problems.append(JSONProblem(path: path, message: message))
    }

    private func quoted(_ text: String) -> String { JSONValue.string(text).jsonString() }

    private func describe(_ value: JSONValue) -> String {
        switch value {
        case .int, .double, .string, .bool: return value.jsonString()
        default: return value.typeName
        }
    }

    /// Letters first (`en`, `yue`), then `-` or `_` separated letters and digits (`pt-BR`, `es-419`).
    static func isLanguageTag(_ key: String) -> Bool {
        let parts = key.split(separator: "-", omittingEmptySubsequences: false)
            .flatMap { $0.split(separator: "_", omittingEmptySubsequences: false) }
        guard let first = parts.first, (2...8).contains(first.count),
            first.unicodeScalars.allSatisfy({ $0.isASCII && $0.properties.isAlphabetic })
        else { return false }
        return parts.dropFirst().allSatisfy { part in
            (1...8).contains(part.count)
                && part.unicodeScalars.allSatisfy {
                    $0.isASCII && $0.properties.isAlphabetic || ("0"..."9").contains($0)
                }
        }
    }
}
