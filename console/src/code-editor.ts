/**
 * A CodeMirror 6 editor mounted in a shadow root, as the console's CSP needs (no inline style):
 * CodeMirror's styles go in a constructed stylesheet, its style attributes through the CSSOM. Used
 * by the SQL editor and the functions page; each adds its language and keys.
 */
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { EditorState, type Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { tags as t } from '@lezer/highlight';
import { basicSetup } from 'codemirror';

/** The page's stylesheet does not reach into the shadow root: the editor's look is set here. */
const editorTheme = EditorView.theme({
  '&': { minHeight: '160px', maxHeight: '45vh', fontSize: '13px', background: '#fff' },
  '.cm-scroller': { fontFamily: 'ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace' },
  '.cm-gutters': { background: '#f7f7f7', color: '#6b6b6b' },
  '&.cm-focused': { outline: '2px solid #2f7d5b' },
});

/** Token colours with at least 4.5:1 contrast on white (the default style's orange has 3.8). */
const highlight = HighlightStyle.define([
  { tag: t.keyword, color: '#7a1fa2' },
  { tag: [t.string, t.special(t.string), t.regexp, t.escape], color: '#a31515' },
  { tag: [t.number, t.bool, t.null, t.atom], color: '#116644' },
  { tag: t.comment, color: '#5c6670', fontStyle: 'italic' },
  { tag: [t.typeName, t.standard(t.name)], color: '#0b5394' },
  { tag: [t.special(t.name), t.labelName], color: '#8a4600' },
  { tag: t.invalid, color: '#b42318' },
]);

/**
 * While the editor is open, a `style` attribute set from script (CodeMirror's tooltips set
 * `style="left: …"` through setAttribute) is applied through the CSSOM (`el.style.cssText`), which
 * the page's CSP allows, instead of as an attribute, which it refuses (no inline style). This
 * loosens nothing: script could always set `el.style`; markup (innerHTML) is still refused.
 * Returns the function that puts setAttribute back.
 */
function styleAttributesThroughCssom(): () => void {
  const proto = Element.prototype;
  const original = proto.setAttribute;
  proto.setAttribute = function (this: Element, name: string, value: string) {
    if (name.toLowerCase() === 'style' && this instanceof HTMLElement) {
      this.style.cssText = value;
      return;
    }
    original.call(this, name, value);
  };
  return () => {
    proto.setAttribute = original;
  };
}

export interface MountedEditor {
  view: EditorView;
  destroy(): void;
}

/** An editor in `host` (its shadow root), with the shared look; `label` names it for screen readers. */
export function mountEditor(
  host: HTMLElement,
  opts: { doc: string; label: string; extensions: Extension[] },
): MountedEditor {
  const shadow = host.shadowRoot ?? host.attachShadow({ mode: 'open' });
  const parent = document.createElement('div');
  shadow.replaceChildren(parent);
  const restoreSetAttribute = styleAttributesThroughCssom();
  const view = new EditorView({
    root: shadow,
    parent,
    state: EditorState.create({
      doc: opts.doc,
      extensions: [
        ...opts.extensions,
        basicSetup,
        EditorView.contentAttributes.of({ 'aria-label': opts.label }),
        editorTheme,
        syntaxHighlighting(highlight),
      ],
    }),
  });
  return {
    view,
    destroy() {
      view.destroy();
      restoreSetAttribute();
    },
  };
}
