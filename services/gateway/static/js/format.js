// Figures as the pages print them: a fixed number of decimals in the page's language, and a
// sign on changes. Never "-0.0": a figure that rounds to zero prints as zero, whatever its
// sign (a stored rating change of -1.18e-15 is no change). Pure, so Node tests it.

function rounded(x, digits) {
  const scale = 10 ** digits;
  const r = Math.round(Number(x) * scale) / scale;
  return r === 0 ? 0 : r; // -0 === 0: both become +0
}

function formatter(lang, digits, sign) {
  return new Intl.NumberFormat(lang || "en", {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
    useGrouping: false,
    signDisplay: sign ? "exceptZero" : "auto",
  });
}

// `x` with `digits` decimals ("1500", "1512.3"); "—" for a missing figure.
export function fixed(x, digits = 0, lang = "en") {
  if (x === null || x === undefined || !Number.isFinite(Number(x))) return "—";
  return formatter(lang, digits, false).format(rounded(x, digits));
}

// A change with its sign: "+12.5", "-3.0", and "0.0" when it rounds to nothing.
export function signed(x, digits = 0, lang = "en") {
  if (x === null || x === undefined || !Number.isFinite(Number(x))) return "—";
  return formatter(lang, digits, true).format(rounded(x, digits));
}
