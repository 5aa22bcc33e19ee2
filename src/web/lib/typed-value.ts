import { useEffect, useRef, useState } from "react";

/**
 * The text of a box whose value lives elsewhere (the URL): applied once typing pauses for `delayMs`,
 * and replaced when the value changes from outside (back button, a cleared filter) without fighting
 * the person typing. `trim`: the value applied is the text trimmed.
 */
export function useTypedValue(
  outside: string,
  apply: (value: string) => void,
  { delayMs, trim = false }: { delayMs: number; trim?: boolean },
): [string, (text: string) => void] {
  const [text, setText] = useState(outside);
  const [lastOutside, setLastOutside] = useState(outside);
  if (outside !== lastOutside) {
    setLastOutside(outside);
    setText(outside);
  }
  // The latest `apply`, so that a page re-rendering while someone types does not restart the pause.
  const applyRef = useRef(apply);
  useEffect(() => {
    applyRef.current = apply;
  });

  useEffect(() => {
    const value = trim ? text.trim() : text;
    if (value === outside) return;
    const timer = setTimeout(() => applyRef.current(value), delayMs);
    return () => clearTimeout(timer);
  }, [text, outside, delayMs, trim]);
  return [text, setText];
}
