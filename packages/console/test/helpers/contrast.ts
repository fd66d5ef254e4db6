// The contrast of disabled controls. axe leaves them out (WCAG exempts "inactive" controls), but a read
// key sees nothing else, so their labels must stay readable: at least 4.5:1 like any other text.
import type { Page } from "playwright-core";

export interface Contrast {
  /** The control: its role and text. */
  what: string;
  ratio: number;
}

/**
 * The contrast of every disabled button, field and label of a disabled fieldset that shows text, as
 * rendered: the text colour and the backgrounds behind it composited through every ancestor's opacity.
 */
export async function disabledContrasts(page: Page): Promise<Contrast[]> {
  return page.evaluate(() => {
    type RGBA = [number, number, number, number];
    const parse = (css: string): RGBA => {
      const m = /rgba?\(([^)]+)\)/.exec(css);
      if (!m) return [0, 0, 0, 0];
      const [r, g, b, a] = (m[1] ?? "")
        .split(/[,\s/]+/)
        .filter(Boolean)
        .map(Number);
      return [r ?? 0, g ?? 0, b ?? 0, a ?? 1];
    };
    /** `top` painted with `alpha` over the opaque `under`. */
    const over = (top: RGBA, under: RGBA, alpha: number): RGBA => [
      top[0] * alpha + under[0] * (1 - alpha),
      top[1] * alpha + under[1] * (1 - alpha),
      top[2] * alpha + under[2] * (1 - alpha),
      1,
    ];
    const luminance = ([r, g, b]: RGBA) => {
      const c = (v: number) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * c(r) + 0.7152 * c(g) + 0.0722 * c(b);
    };
    const ratio = (a: RGBA, b: RGBA) => {
      const [l1, l2] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
      return (l1 + 0.05) / (l2 + 0.05);
    };
    const rendered = (element: Element) => {
      const chain: Element[] = [];
      for (let e: Element | null = element; e; e = e.parentElement) chain.unshift(e);
      // The canvas: the root's background, else white.
      let background: RGBA = [255, 255, 255, 1];
      let opacity = 1;
      for (const e of chain) {
        const style = getComputedStyle(e);
        opacity *= Number(style.opacity);
        const own = parse(style.backgroundColor);
        if (own[3] > 0) background = over(own, background, own[3] * (e === chain[0] ? 1 : opacity));
      }
      const text = parse(getComputedStyle(element).color);
      return { text: over(text, background, text[3] * opacity), background };
    };
    const controls = [
      ...document.querySelectorAll("button:disabled, input:disabled, select:disabled, textarea:disabled"),
      ...document.querySelectorAll("fieldset:disabled label"),
    ];
    return controls
      .filter((e) => {
        const shown = (e as HTMLElement).offsetParent !== null;
        const text = e instanceof HTMLInputElement || e instanceof HTMLTextAreaElement ? e.value : e.textContent;
        const isBox = e instanceof HTMLInputElement && (e.type === "radio" || e.type === "checkbox");
        return shown && !isBox && (text ?? "").trim() !== "";
      })
      .map((e) => {
        const { text, background } = rendered(e);
        const label =
          e instanceof HTMLInputElement || e instanceof HTMLTextAreaElement ? e.value : (e.textContent ?? "");
        return {
          what: `${e.tagName.toLowerCase()} "${label.trim().slice(0, 40)}"`,
          ratio: Math.round(ratio(text, background) * 100) / 100,
        };
      });
  });
}
