import HubCore

/// The pages' one style sheet (`/dashboard/app.css`): no external asset, so the pages work with no network.
/// Colours say the same thing on every page — red: an alert (a status a rule fires on), slate: offline, green:
/// fine, grey: waiting for a first message — each with white or dark text at a contrast of at least 4.5:1
/// (`DashboardLookTests` measures it in Chromium). Under 640 px wide the tables become cards, so no page scrolls
/// sideways on a phone.
enum WebStyle {
    /// The state colours, by `SensorLook.State`: background and text.
    static let states: [(state: String, background: String, text: String)] = [
        ("alert", "#b42318", "#ffffff"),
        ("offline", "#475467", "#ffffff"),
        ("fine", "#067647", "#ffffff"),
        ("waiting", "#e4e7ec", "#1d2330"),
    ]

    static let text: String =
        #"""
        :root{--bg:#f6f7f9;--card:#fff;--ink:#1d2330;--muted:#4b5563;--line:#d9dee5;--accent:#1d4ed8}
        *{box-sizing:border-box}
        body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:var(--bg);color:var(--ink);line-height:1.4}
        a{color:var(--accent)}
        header.top{display:flex;flex-wrap:wrap;align-items:center;gap:.3rem .8rem;padding:.5rem 1rem;background:#1d2330;color:#fff}
        header.top a{color:#fff;text-decoration:none}
        header.top .brand{font-weight:700;margin-right:.4rem}
        header.top nav{display:flex;flex-wrap:wrap;gap:.2rem}
        header.top nav a{padding:.35rem .6rem;border-radius:6px}
        header.top nav a[aria-current=page]{background:#3a4356}
        .userbar{margin-left:auto;font-size:.85rem;display:flex;align-items:center;gap:.4rem;flex-wrap:wrap}
        .userbar form{display:inline;margin:0}
        .userbar button{background:transparent;color:#fff;border-color:#8a94a6;min-height:2rem;padding:.2rem .6rem}
        main{padding:1rem;max-width:72rem;margin:0 auto}
        h1{font-size:1.3rem;margin:0 0 1rem} h2{font-size:1.05rem;margin:1.5rem 0 .5rem}
        button,input,select,textarea{font:inherit}
        button{padding:.4rem .8rem;border-radius:8px;border:1px solid #b8c0cc;background:#fff;color:var(--ink);cursor:pointer;min-height:2.5rem}
        button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
        button.danger{color:#b42318;border-color:#b42318}
        button:disabled{opacity:.6;cursor:default}
        input,select,textarea{padding:.45rem .55rem;border:1px solid #b8c0cc;border-radius:8px;background:#fff;color:var(--ink);min-height:2.5rem;max-width:100%}
        .muted{color:var(--muted);font-size:.85rem}
        .error{color:#b42318} .warning{color:#93370d} .ok{color:#067647} .notice{font-weight:600}
        .banner{background:#fef3f2;border:1px solid #fda29b;padding:.6rem;border-radius:8px}
        #firing:empty{display:none}
        .alert{display:flex;flex-wrap:wrap;align-items:center;gap:.4rem .6rem;background:#fef3f2;border:1px solid #fda29b;border-left:6px solid #b42318;border-radius:10px;padding:.6rem .8rem;margin-bottom:.5rem}
        .alert.acknowledged{background:#fff;border-color:var(--line);border-left-color:#475467}
        .alert .what{font-weight:600;flex:1 1 14rem;overflow-wrap:anywhere}
        .alert .why{color:var(--muted);font-size:.85rem;flex-basis:100%}
        .alert .buttons{display:flex;gap:.4rem;flex-wrap:wrap}
        .toolbar{display:flex;flex-wrap:wrap;gap:.5rem;margin:1rem 0}
        .toolbar input[type=search]{flex:1 1 12rem}
        .grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(15rem,1fr));gap:.6rem}
        .sensor{background:var(--card);border-radius:10px;padding:.65rem .8rem;border:1px solid var(--line);border-left:6px solid #c5cbd3;min-width:0}
        .sensor .head{display:flex;justify-content:space-between;align-items:flex-start;gap:.5rem}
        .sensor .name{font-weight:600;overflow-wrap:anywhere;min-width:0}
        .sensor .head .status{flex-shrink:0;max-width:65%}
        .status{display:inline-block;padding:.1rem .55rem;border-radius:999px;font-weight:600;white-space:nowrap;max-width:100%;overflow:hidden;text-overflow:ellipsis}
        .flag{display:inline-block;background:#fffaeb;color:#93370d;border:1px solid #fedf89;border-radius:6px;padding:0 .4rem;font-size:.8rem;margin:.25rem .25rem 0 0}
        .attributes{overflow-wrap:anywhere;margin-top:.15rem}
        .sensor .actions{margin-top:.45rem;display:flex;gap:.35rem;flex-wrap:wrap}
        .sensor .actions button{min-height:2.2rem;padding:.2rem .6rem;font-size:.85rem}
        dialog{border:none;border-radius:12px;padding:1rem 1.2rem;width:min(32rem,calc(100vw - 1.5rem));color:var(--ink)}
        dialog::backdrop{background:rgba(16,24,40,.45)}
        dialog h2{margin-top:0}
        dialog label{display:block;margin:.55rem 0}
        dialog label input,dialog label select,dialog label textarea{display:block;width:100%;margin-top:.2rem}
        dialog .buttons{display:flex;gap:.5rem;justify-content:flex-end;margin-top:1rem;flex-wrap:wrap}
        .lengths{display:flex;flex-wrap:wrap;gap:.3rem;margin-top:.2rem}
        .lengths button[aria-pressed=true]{background:var(--accent);color:#fff;border-color:var(--accent)}
        .preview{background:var(--bg);border-radius:8px;padding:.5rem .7rem;font-size:.9rem;max-height:12rem;overflow:auto;overflow-wrap:anywhere}
        .preview ul{margin:.2rem 0;padding-left:1.2rem}
        #discover-list{max-height:50vh;overflow:auto}
        #discover-list label.device{display:block;padding:.4rem 0;border-bottom:1px solid var(--line);overflow-wrap:anywhere}
        #discover-list input{min-height:auto;width:1.2rem;height:1.2rem;vertical-align:middle}
        table{border-collapse:collapse;width:100%;background:#fff;border-radius:8px;overflow:hidden}
        th,td{text-align:left;padding:.5rem .6rem;border-bottom:1px solid var(--line);font-size:.95rem;overflow-wrap:anywhere;vertical-align:top}
        th{background:#eef1f5;font-weight:600}
        td.status{font-weight:600}
        .filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end;margin-bottom:1rem}
        .filters label{display:flex;flex-direction:column;font-size:.85rem;color:var(--muted);gap:.15rem}
        .card{border-radius:10px;padding:1rem;color:#111;max-width:28rem;margin-bottom:1rem}
        .card .big{font-size:2rem;font-weight:700}
        .grey{background:#d0d5dd}
        .charts img,.charts svg{width:100%;max-width:40rem;background:#fff;border-radius:8px;display:block;margin-bottom:.5rem}
        .charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,34rem),1fr));gap:.6rem}
        figure.chart{margin:0;background:#fff;border:1px solid var(--line);border-radius:10px;padding:.5rem .6rem;min-width:0}
        figure.chart .plot{width:100%;height:220px}
        figure.chart .dygraph-title{font-size:.95rem;font-weight:600;color:var(--ink)}
        figure.chart .dygraph-legend{background:rgba(255,255,255,.95);color:var(--ink);font-size:.8rem;padding:.1rem .3rem;border-radius:4px}
        figure.chart .dygraph-axis-label{color:var(--ink);font-size:.75rem}
        nav.periods a[aria-current]{font-weight:700}
        nav.periods a{margin-right:.8rem}
        #push input,#push button{margin:.2rem .4rem .2rem 0}
        #push-status[data-state=error]{color:#b42318} #push-status[data-state=done]{color:#067647}
        .map svg{width:100%;max-width:40rem;background:#fff;border-radius:8px;display:block}
        dl.figures{display:grid;grid-template-columns:fit-content(55%) minmax(0,1fr);gap:.2rem 1rem;margin:0 0 1rem}
        dl.figures dt{color:var(--muted)} dl.figures dd{margin:0;font-weight:600}
        main.login,main.narrow{max-width:26rem;margin:2rem auto}
        main.login label{display:block;margin:.6rem 0}
        main.login input{display:block;width:100%;margin-top:.2rem}
        main.login button,main.narrow button{margin-top:.6rem}
        main.narrow .names{font-size:1.15rem;font-weight:600;padding-left:1.2rem}
        main.narrow button.primary{width:100%;font-size:1.2rem;min-height:3rem}
        pre{white-space:pre-wrap;overflow-wrap:anywhere}
        .visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
        fieldset.plain{border:none;padding:0;margin:.55rem 0} fieldset.plain legend{padding:0}
        [hidden]{display:none!important}
        @media (max-width:640px){
          table.cards thead{display:none}
          table.cards,table.cards tbody,table.cards tr,table.cards td{display:block;width:100%}
          table.cards tr{border-bottom:1px solid var(--line);padding:.35rem 0}
          table.cards td{border:none;padding:.15rem .6rem}
          table.cards td[data-label]::before{content:attr(data-label) ": ";color:var(--muted);font-weight:400}
          main{padding:.75rem}
        }

        """# + HubAPI.levelStyles + "\n" + stateStyles

    /// A class per state (`.state-alert`) and the sensor card's edge in its colour.
    static var stateStyles: String {
        states.map { ".state-\($0.state){background:\($0.background);color:\($0.text)}\n" }.joined()
            + states.filter { $0.state != "waiting" }.map {
                ".sensor[data-look=\($0.state)]{border-left-color:\($0.background)}\n"
            }.joined()
    }
}
