/// The dashboard's script: the live tail (the only page that needs one). Plain DOM code; text
/// goes in through `textContent`, never as markup.
enum DashboardScript {
    static let text = """
        "use strict";
        (function () {
          const status = document.getElementById("live-status");
          const table = document.getElementById("live-events");
          if (!status || !table || !window.EventSource) { return; }
          const body = table.tBodies[0];
          const maximumRows = 200;
          function cell(row, text, className) {
            const element = document.createElement("td");
            element.textContent = text;
            if (className) { element.className = className; }
            row.appendChild(element);
          }
          function show(event) {
            const row = document.createElement("tr");
            row.className = "live-event";
            row.dataset.messageId = event.messageId;
            cell(row, event.timestamp.replace("T", " ").slice(0, 19), "time");
            cell(row, event.event || event.type, "name");
            cell(row, event.userId || (event.anonymousId ? "anonymous " + event.anonymousId : "–"), "user");
            cell(row, event.sessionId ? event.sessionId.slice(0, 8) : "–", "session");
            const properties = Object.keys(event.properties || {}).sort().map(function (key) {
              const value = event.properties[key];
              return key + ": " + (typeof value === "string" ? value : JSON.stringify(value));
            });
            cell(row, properties.join(", "), "properties");
            body.insertBefore(row, body.firstChild);
            while (body.rows.length > maximumRows) { body.deleteRow(body.rows.length - 1); }
          }
          const stream = new EventSource(status.dataset.stream);
          stream.addEventListener("open", function () {
            status.textContent = "Connected: new events appear below as the collector stores them.";
            status.dataset.state = "open";
          });
          stream.addEventListener("error", function () {
            status.textContent = "Disconnected; reconnecting…";
            status.dataset.state = "reconnecting";
          });
          stream.addEventListener("stored", function (message) {
            try { show(JSON.parse(message.data)); } catch (error) { console.error(error); }
          });
        })();

        """
}
