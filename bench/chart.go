package main

import (
	"fmt"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// drawChart draws the Scale section's converge wall time, the process's
// CPU time during the converge and heap per parent against N, one line
// per variant, side by side, as a PNG at path.
func drawChart(path string, vs []variant, points []point) error {
	panels := []struct {
		fig   scaleFigure
		title string
		y     string
	}{
		{figure("wall"), "Converge from empty: wall time", "ms per parent"},
		{figure("cpu"), "Converge from empty: CPU of the operator process", "ms per parent"},
		{figure("heap"), "Heap per parent", "KiB per parent"},
	}
	row := make([]*plot.Plot, len(panels))
	for i, pn := range panels {
		p := plot.New()
		p.Title.Text = pn.title
		p.X.Label.Text = "parents (N)"
		p.Y.Label.Text = pn.y
		p.Y.Min = 0
		p.Legend.Top = true
		p.Legend.Left = true
		p.Add(plotter.NewGrid())
		for j, v := range vs {
			var xys plotter.XYs
			for _, pt := range points {
				if y, ok := pn.fig.value(pt, v); ok {
					xys = append(xys, plotter.XY{X: float64(pt.n), Y: y})
				}
			}
			if len(xys) == 0 {
				continue
			}
			line, marks, err := plotter.NewLinePoints(xys)
			if err != nil {
				return fmt.Errorf("chart: %w", err)
			}
			line.Color = plotutil.Color(j)
			line.Width = vg.Points(1.5)
			marks.Color = plotutil.Color(j)
			marks.Shape = plotutil.Shape(j)
			p.Add(line, marks)
			p.Legend.Add(v.key+" "+v.name, line, marks)
		}
		p.Y.Max *= 1.35 // room for the legend above the lines
		ticks := make([]plot.Tick, len(points))
		for k, pt := range points {
			ticks[k] = plot.Tick{Value: float64(pt.n), Label: fmt.Sprint(pt.n)}
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		row[i] = p
	}
	img := vgimg.NewWith(vgimg.UseWH(vg.Points(1260), vg.Points(420)), vgimg.UseDPI(96))
	tiles := draw.Tiles{Rows: 1, Cols: len(row), PadX: vg.Points(24), PadTop: vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(8), PadRight: vg.Points(8)}
	canvases := plot.Align([][]*plot.Plot{row}, tiles, draw.New(img))
	for i, p := range row {
		p.Draw(canvases[0][i])
	}
	f, err := os.Create(path) //nolint:gosec // a path from the command line
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("chart: %w", err)
	}
	return f.Close()
}
