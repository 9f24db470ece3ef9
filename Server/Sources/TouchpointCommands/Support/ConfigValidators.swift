import TouchpointCollector
import TouchpointPromo
import TouchpointSurveys

extension ConfigValidatorRegistry {
    /// The validators of the SDK modules that read each document, the ones `touchpoint serve` uses:
    /// ``ConfigKind/surveys`` through `SurveyConfigValidator` (the strict reading, which also flags
    /// unknown fields) and ``ConfigKind/catalog`` through `PromoCatalogValidator`.
    ///
    /// The collector module knows only the documents' structure (``structural``) because it must not
    /// depend on the SDK modules; the CLI, which links both, joins them here. A document the app
    /// would read with problems is refused with 422 and the JSON path of the first one.
    static var touchpoint: ConfigValidatorRegistry {
        var registry = ConfigValidatorRegistry()
        registry.register(.surveys) { SurveyConfigValidator.validate($0) }
        registry.register(.catalog) { PromoCatalogValidator.problems(in: $0) }
        return registry
    }
}
