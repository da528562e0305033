// The sample browser of `papergym report`: reads each browser's index block (ids, titles,
// scores, [criterion, met] checks) and draws one page of questions at a time. A question's
// details (text, answers, reasons) sit in blocks of `chunk` questions at the end of the page,
// after this script: opening a question parses only its block, once, and waits for the page
// to finish parsing if it has not yet. So a page of 10,000 samples is usable before it has
// loaded. Data is written with textContent only: answers are untrusted text.
// The filter can be set from the address: #system=NAME&min=0&max=0.5&criterion=ID&met=no&sort=diff&page=2
// and a question opened: #open=ID (how the browser tests drive it without a driver).
"use strict";
(function () {
  var PAGE = 50;

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  function hashState() {
    var state = {};
    var raw = window.location.hash.replace(/^#/, "");
    raw.split("&").forEach(function (part) {
      var at = part.indexOf("=");
      if (at > 0) state[decodeURIComponent(part.slice(0, at))] = decodeURIComponent(part.slice(at + 1));
    });
    return state;
  }

  function fmt(value) {
    return value === null || value === undefined ? "n/a" : Number(value).toFixed(3);
  }

  function metValue(choice) {
    return choice === "yes" ? true : choice === "no" ? false : choice === "unscored" ? null : undefined;
  }

  function Browser(root, data) {
    this.root = root;
    this.data = data;
    this.chunks = {};  // details blocks parsed so far, by number
    data.items.forEach(function (item, at) { item.at = at; });
    this.state = { system: "", min: "", max: "", criterion: "", met: "any", sort: "question", page: 1, open: "" };
    var given = hashState();
    for (var key in this.state) if (Object.prototype.hasOwnProperty.call(given, key)) this.state[key] = given[key];
    this.state.page = Math.max(1, parseInt(this.state.page, 10) || 1);
    this.build();
    this.update();
  }

  Browser.prototype.systemsShown = function () {
    return this.state.system ? [this.state.system] : this.data.systems;
  };

  Browser.prototype.itemScore = function (item) {
    var values = [];
    this.systemsShown().forEach(function (name) {
      var entry = item.systems[name];
      if (entry && entry.score !== null) values.push(entry.score);
    });
    if (!values.length) return null;
    return values.reduce(function (a, b) { return a + b; }, 0) / values.length;
  };

  Browser.prototype.spread = function (item) {
    var values = [];
    this.data.systems.forEach(function (name) {
      var entry = item.systems[name];
      if (entry && entry.score !== null) values.push(entry.score);
    });
    return values.length > 1 ? Math.max.apply(null, values) - Math.min.apply(null, values) : -1;
  };

  Browser.prototype.keep = function (item) {
    var s = this.state;
    var names = this.systemsShown();
    var low = s.min === "" ? null : parseFloat(s.min);
    var high = s.max === "" ? null : parseFloat(s.max);
    if (low !== null || high !== null) {
      var inRange = names.some(function (name) {
        var entry = item.systems[name];
        if (!entry || entry.score === null) return false;
        return (low === null || entry.score >= low) && (high === null || entry.score <= high);
      });
      if (!inRange) return false;
    }
    if (s.criterion !== "" || s.met !== "any") {
      var wanted = metValue(s.met);
      return names.some(function (name) {
        var entry = item.systems[name];
        return entry && entry.checks.some(function (check) {
          return (s.criterion === "" || check[0] === s.criterion) && (wanted === undefined || check[1] === wanted);
        });
      });
    }
    return true;
  };

  Browser.prototype.sorted = function (items) {
    var self = this;
    var sort = this.state.sort;
    if (sort === "question") return items;
    var keyed = items.map(function (item, index) {
      var key = sort === "diff" ? self.spread(item) : self.itemScore(item);
      if (key === null) key = sort === "score-up" ? Infinity : -Infinity;
      return [sort === "score-up" ? key : -key, index, item];
    });
    keyed.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
    return keyed.map(function (k) { return k[2]; });
  };

  Browser.prototype.control = function (label, node, key) {
    var self = this;
    var wrap = el("label", label + " ");
    node.value = this.state[key];
    node.addEventListener("change", function () {
      self.state[key] = node.value;
      self.state.page = 1;
      self.update();
    });
    wrap.appendChild(node);
    this.controls.appendChild(wrap);
    return node;
  };

  Browser.prototype.select = function (label, key, options) {
    var node = el("select");
    options.forEach(function (option) {
      var item = el("option", option[1]);
      item.value = option[0];
      node.appendChild(item);
    });
    return this.control(label, node, key);
  };

  Browser.prototype.number = function (label, key) {
    var node = el("input");
    node.type = "number";
    node.step = "0.05";
    node.min = "0";
    node.max = "1";
    node.size = 5;
    return this.control(label, node, key);
  };

  Browser.prototype.build = function () {
    var self = this;
    this.root.textContent = "";
    this.controls = el("div", null, "browser-controls");
    var systems = [["", "all"]].concat(this.data.systems.map(function (n) { return [n, n]; }));
    this.select("system", "system", systems);
    this.number(this.data.score + " from", "min");
    this.number("to", "max");
    var criterion = el("input");
    criterion.placeholder = "any";
    criterion.size = 12;
    var list = el("datalist");
    list.id = this.root.dataset.source + "-criteria";
    this.data.criteria.forEach(function (id) { var o = el("option"); o.value = id; list.appendChild(o); });
    criterion.setAttribute("list", list.id);
    this.control("criterion", criterion, "criterion");
    this.controls.appendChild(list);
    this.select("verdict", "met", [["any", "any"], ["yes", "met"], ["no", "not met"], ["unscored", "unscored"]]);
    this.select("sort by", "sort", [
      ["question", "question"], ["score-down", this.data.score + " (high first)"],
      ["score-up", this.data.score + " (low first)"], ["diff", "difference between systems"]
    ]);
    this.status = el("p", null, "browser-status");
    this.list = el("div", null, "browser-list");
    this.pager = el("div", null, "browser-pager");
    this.prev = el("button", "previous");
    this.next = el("button", "next");
    this.prev.type = this.next.type = "button";
    this.prev.addEventListener("click", function () { self.state.page -= 1; self.update(); });
    this.next.addEventListener("click", function () { self.state.page += 1; self.update(); });
    this.pageText = el("span");
    this.pager.appendChild(this.prev);
    this.pager.appendChild(this.pageText);
    this.pager.appendChild(this.next);
    [this.controls, this.status, this.list, this.pager].forEach(function (n) { self.root.appendChild(n); });
  };

  Browser.prototype.update = function () {
    var self = this;
    var shown = this.sorted(this.data.items.filter(function (item) { return self.keep(item); }));
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    this.state.page = Math.min(Math.max(1, this.state.page), pages);
    var start = (this.state.page - 1) * PAGE;
    var page = shown.slice(start, start + PAGE);
    this.status.textContent = "Showing " + shown.length + " of " + this.data.items.length + " questions";
    this.status.dataset.shown = String(shown.length);
    this.status.dataset.total = String(this.data.items.length);
    this.list.textContent = "";
    page.forEach(function (item) { self.list.appendChild(self.row(item)); });
    this.pageText.textContent = " page " + this.state.page + " of " + pages + " ";
    this.prev.disabled = this.state.page <= 1;
    this.next.disabled = this.state.page >= pages;
  };

  Browser.prototype.row = function (item) {
    var self = this;
    var details = el("details", null, "sample");
    var head = el("summary");
    head.appendChild(el("span", item.id, "sample-id"));
    if (item.title) head.appendChild(el("span", " " + item.title, "sample-title"));
    var scores = this.systemsShown().map(function (name) {
      var entry = item.systems[name];
      return name + ": " + (entry ? (entry.score === null ? "unscored" : fmt(entry.score)) : "—");
    });
    head.appendChild(el("span", " · " + scores.join(" · "), "muted"));
    details.appendChild(head);
    details.addEventListener("toggle", function () {
      if (details.open && details.childNodes.length === 1) self.fill(details, item);
    });
    if (this.state.open === item.id) {
      details.open = true;
      this.fill(details, item);
    }
    return details;
  };

  Browser.prototype.detail = function (item) {
    // the question's details: its block parsed on first use, then kept
    var number = Math.floor(item.at / this.data.chunk);
    if (!this.chunks[number]) {
      var block = document.getElementById(this.root.dataset.details + "-" + number);
      this.chunks[number] = block ? JSON.parse(block.textContent) : [];
    }
    return this.chunks[number][item.at % this.data.chunk] || { question: "", criteria: {}, systems: {} };
  };

  Browser.prototype.fill = function (details, item) {
    var self = this;
    if (document.readyState === "loading") {
      // the details blocks come after this script: wait until the parser has read them all
      var waiting = el("p", "loading…", "loading");
      details.appendChild(waiting);
      document.addEventListener("DOMContentLoaded", function () {
        details.removeChild(waiting);
        self.fill(details, item);
      });
      return;
    }
    var more = this.detail(item);
    if (more.question) details.appendChild(el("p", more.question, "question"));
    this.systemsShown().forEach(function (name) {
      var entry = item.systems[name];
      if (!entry) return;
      var full = more.systems[name] || { words: 0, text: "", cut: false, checks: [] };
      var score = entry.score === null ? "unscored (" + entry.unscored + ")" : self.data.score + " " + fmt(entry.score);
      var words = self.data.kind === "eval" ? " · " + full.words + " words" : "";
      details.appendChild(el("h4", name + words + " · " + score));
      if (self.data.kind === "eval") {
        details.appendChild(el("pre", full.text + (full.cut ? "\n[… cut here in the report]" : ""), "answer"));
      }
      if (full.checks.length) details.appendChild(self.checks(full.checks, more.criteria || {}));
    });
  };

  Browser.prototype.checks = function (checks, texts) {
    var compare = this.data.kind === "compare";
    var table = el("table");
    var head = el("tr");
    var names = compare ? ["criterion", "judge · order", "picked", "reason"] : ["criterion", "text", "verdict", "reason", "quote"];
    names.forEach(function (n) { head.appendChild(el("th", n)); });
    table.appendChild(head);
    checks.forEach(function (check) {
      var row = el("tr");
      row.appendChild(el("td", check[0]));
      row.appendChild(el("td", check[1] || texts[check[0]] || ""));
      var verdict = check[2] === null ? "unscored" : compare ? (check[2] ? "yes" : "no") : check[2] ? "pass" : "fail";
      row.appendChild(el("td", verdict, check[2] === null ? "" : check[2] ? "pass" : "fail"));
      row.appendChild(el("td", check[3]));
      if (!compare) {
        var quote = el("td", check[4]);
        if (check[5]) quote.appendChild(el("span", " unbacked (" + check[5] + ")", "fail"));
        row.appendChild(quote);
      }
      table.appendChild(row);
    });
    return table;
  };

  function timing() {
    // time to first paint and to load, for benchmarks/report_scale.py (read from the DOM after load)
    var paints = performance.getEntriesByType ? performance.getEntriesByType("paint") : [];
    paints.forEach(function (entry) {
      document.body.dataset[entry.name === "first-paint" ? "firstPaintMs" : "firstContentfulPaintMs"] = entry.startTime.toFixed(1);
    });
    var nav = performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
    if (nav) document.body.dataset.loadMs = nav.loadEventStart.toFixed(1);
  }

  var drawn = 0;
  document.querySelectorAll("div.browser").forEach(function (root) {
    var source = document.getElementById(root.dataset.source);
    if (source) {
      new Browser(root, JSON.parse(source.textContent));
      drawn += 1;
    }
  });
  // "browser ready": every list drawn and usable, though the details may still be loading
  if (drawn) document.body.dataset.browserReadyMs = performance.now().toFixed(1);
  window.addEventListener("load", function () {
    window.requestAnimationFrame(function () { window.setTimeout(timing, 0); });
  });
})();
