import Foundation
import Testing
import TouchpointCore

struct RetryAfterTests {
    /// 1994-11-06T08:49:37Z, the example instant of RFC 9110.
    let example = Date(timeIntervalSince1970: 784_111_777)

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        "sun, 06 nov 1994 08:49:37 gmt",
    ])
    func readsAllThreeHTTPDateForms(text: String) {
        #expect(HTTPDate.parse(text, now: Date(timeIntervalSince1970: 1_767_225_600)) == example)
    }

    @Test func formatsIMFFixdate() {
        #expect(HTTPDate.format(example) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 GMT")
    }

    @Test func formatAndParseRoundTripOverManyDays() {
        for day in stride(from: -3_000, through: 30_000, by: 37) {
            let date = Date(timeIntervalSince1970: TimeInterval(day) * 86_400 + 3_723)
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
        }
    }

    @Test func twoDigitYearsStayWithinFiftyYears() {
        let now = Date(timeIntervalSince1970: 1_767_225_600)  // 2026
        // 2090 would be more than 50 years ahead: it is 1990. 2070 is not: it stays 2070.
        #expect(HTTPDate.parse("Monday, 01-Jan-90 00:00:00 GMT", now: now) == Date(timeIntervalSince1970: 631_152_000))
        #expect(
            HTTPDate.parse("Wednesday, 01-Jan-70 00:00:00 GMT", now: now).map(HTTPDate.format)
                == "Wed, 01 Jan 2070 00:00:00 GMT")
        let year2030 = HTTPDate.parse("Tuesday, 01-Jan-30 00:00:00 GMT", now: now)
        #expect(year2030.map(HTTPDate.format) == "Tue, 01 Jan 2030 00:00:00 GMT")
    }

    @Test(arguments: [
        "", "soon", "-5", "1.5", "12 seconds", "Sun, 06 Nov 1994 08:49:37", "Sun, 31 Feb 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT extra",
        "Sun, 06 Nov 1994 08:49:37 GMT; x", "🙂",
    ])
    func garbageIsNotADelay(text: String) {
        #expect(RetryAfter.delay(from: text, now: example) == nil)
    }

    @Test func secondsAndDatesBecomeDelays() {
        #expect(RetryAfter.delay(from: "120", now: example) == 120)
        #expect(RetryAfter.delay(from: " 0 ", now: example) == 0)
        #expect(RetryAfter.delay(from: "99999999999999999999999", now: example) == TimeInterval(UInt64.max))
        #expect(RetryAfter.delay(from: "Sun, 06 Nov 1994 08:50:07 GMT", now: example) == 30)
        // A date in the past means "now".
        #expect(RetryAfter.delay(from: "Sun, 06 Nov 1994 08:00:00 GMT", now: example) == 0)
    }

    @Test func responsesExposeRetryAfter() {
        let url = URL(string: "http://127.0.0.1/")!
        let response = TransportResponse(status: 429, headers: ["retry-after": "7"], url: url)
        #expect(response.retryAfter(now: example) == 7)
        #expect(TransportResponse(status: 503, url: url).retryAfter(now: example) == nil)
    }
}
