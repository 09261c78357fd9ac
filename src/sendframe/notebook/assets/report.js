// each chart is drawn as its card is parsed, before the grid has its final columns: redraw them at their
// cards' final widths once the page is laid out, or the first chart keeps the full page width and runs past its card
window.addEventListener('load', function () {
  document.querySelectorAll('.js-plotly-plot').forEach(function (plot) { Plotly.Plots.resize(plot); });
});
