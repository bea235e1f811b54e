package inspector_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"slices"
)

// maxScreenshot is the size a README screenshot is brought under.
const maxScreenshot = 150 << 10

// shrinkPNG re-encodes a screenshot with the best compression and, when it is still
// over maxScreenshot, with a palette of its 256 most frequent colors: a page of flat
// colors and text loses nothing a reader would see.
func shrinkPNG(b []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("decode screenshot: %w", err)
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	var out bytes.Buffer
	if err := enc.Encode(&out, img); err != nil {
		return nil, err
	}
	if out.Len() <= maxScreenshot {
		return out.Bytes(), nil
	}
	pal := image.NewPaletted(img.Bounds(), topColors(img, 256))
	draw.Draw(pal, pal.Bounds(), img, img.Bounds().Min, draw.Src)
	out.Reset()
	if err := enc.Encode(&out, pal); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func topColors(img image.Image, n int) color.Palette {
	counts := map[color.RGBA]int{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			counts[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	colors := make([]color.RGBA, 0, len(counts))
	for c := range counts {
		colors = append(colors, c)
	}
	slices.SortFunc(colors, func(a, b color.RGBA) int { return counts[b] - counts[a] })
	pal := color.Palette{}
	for _, c := range colors[:min(n, len(colors))] {
		pal = append(pal, c)
	}
	return pal
}
