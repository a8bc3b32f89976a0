extension HomeScript {
    /// The home page's charts.
    static let charts = #"""
        // The charts, with dygraphs: a time axis, the value on hover, the bucket's lowest and highest as a band, the
        // guideline dashed, zoom by dragging. Drawn as each scrolls into view, and again each minute.
        let period = 'day';
        const graphs = new Map();
        async function drawChart(box) {
          let data;
          try { data = await api('GET', box.dataset.src + '&period=' + period); } catch (e) { return; }
          const plot = box.querySelector('.plot');
          const rows = data.points.map(p => [new Date(p[0]), [p[1], p[2], p[3]]]);
          const title = data.title + (data.unit ? ' (' + data.unit + ')' : '');
          if (!rows.length) {
            graphs.get(box)?.destroy(); graphs.delete(box);
            plot.replaceChildren(el('p', {class: 'muted', text: title + ': no readings in the last ' + period + ' yet.'}));
            return;
          }
          if (!graphs.has(box)) plot.replaceChildren();
          const lines = data.lines;
          const levels = lines.map(l => l.value);
          const highest = Math.max(...rows.map(r => r[1][2]), ...levels);
          const lowest = data.fromZero ? 0 : Math.min(...rows.map(r => r[1][0]), ...levels);
          const pad = (highest - lowest) * 0.1 || Math.max(Math.abs(highest) * 0.05, 1);
          // A history younger than the period is shown from its first reading, not as a line at the right edge.
          const first = rows[0][0].getTime();
          const start = Math.max(data.from, first - Math.max((data.to - first) * 0.05, 60000));
          const options = {
            labels: ['Time', data.title], customBars: true, title, ylabel: data.unit || '', legend: 'follow',
            colors: ['#1d4ed8'], strokeWidth: 2, fillAlpha: 0.2, drawPoints: rows.length < 60, pointSize: 2,
            digitsAfterDecimal: 1, axisLabelFontSize: 12, dateWindow: [start, data.to],
            valueRange: [data.fromZero ? 0 : lowest - pad, highest + pad],
            // The guideline and the thresholds, dashed, each with its label.
            underlayCallback: (ctx, area, g) => {
              for (const line of lines) {
                const y = g.toDomYCoord(line.value);
                ctx.save(); ctx.strokeStyle = '#b42318'; ctx.setLineDash([6, 4]); ctx.beginPath();
                ctx.moveTo(area.x, y); ctx.lineTo(area.x + area.w, y); ctx.stroke();
                ctx.fillStyle = '#b42318'; ctx.font = '12px sans-serif';
                ctx.fillText(line.label, area.x + area.w - ctx.measureText(line.label).width - 4, y - 4);
                ctx.restore();
              }
            },
          };
          if (graphs.has(box)) graphs.get(box).updateOptions({file: rows, ...options});
          else graphs.set(box, new Dygraph(plot, rows, options));
          box.dataset.points = rows.length;
        }
        const seen = new Set();
        const watcher = new IntersectionObserver(entries => {
          for (const entry of entries) if (entry.isIntersecting && !seen.has(entry.target)) {
            seen.add(entry.target); drawChart(entry.target);
          }
        });
        for (const box of document.querySelectorAll('figure.chart')) watcher.observe(box);
        const redraw = () => { for (const box of seen) drawChart(box); };
        document.querySelectorAll('#periods a').forEach(a => a.addEventListener('click', e => {
          e.preventDefault(); period = a.dataset.period;
          for (const o of document.querySelectorAll('#periods a')) o.toggleAttribute('aria-current', o === a);
          redraw();
        }));
        setInterval(redraw, 60000);
        """#
}
