import QRCode from 'qrcode';
import { useEffect, useState } from 'react';

/** A QR code of `text` as an <img> with an SVG data URL (the CSP allows data: images, nothing inline). */
export function QrCode({ text, label }: { text: string; label: string }) {
  const [src, setSrc] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let live = true;
    setFailed(false);
    QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
      .then((svg) => live && setSrc(`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`))
      .catch(() => live && setFailed(true));
    return () => {
      live = false;
    };
  }, [text]);
  if (failed) return <p className="muted">The QR code could not be drawn; copy the address instead.</p>;
  if (!src) return <div className="qr qr-placeholder" aria-hidden="true" />;
  return <img className="qr" src={src} alt={label} width={192} height={192} />;
}
