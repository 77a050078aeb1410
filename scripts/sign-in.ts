/**
 * Signs in to the service with a wallet, as a customer's script would: asks for a nonce,
 * builds the EIP-4361 message the service expects, signs it with the wallet's key, sends it back with
 * the `pipo_nonce` cookie the nonce came with (a nonce works only for the client that asked), and prints the
 * session cookie (one line, `pipo_session=…`) to stdout for curl's `-b`. The key is read from
 * WALLET_PRIVATE_KEY and never sent anywhere: only the signature is.
 *
 *   WALLET_PRIVATE_KEY=0x… npm run -s sign-in -- [--url http://localhost:3000]
 *
 * The service's address: --url, else $BASE (the README's walk-through sets it), else $PUBLIC_URL, else
 * http://localhost:$PORT (3000 when PORT is unset), as the server itself would be found.
 */
import { parseArgs } from 'node:util';
import { privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';

const { values } = parseArgs({ args: process.argv.slice(2), options: { url: { type: 'string' } } });
const base = (values.url ?? process.env.BASE ?? process.env.PUBLIC_URL ?? `http://localhost:${process.env.PORT ?? 3000}`).replace(/\/$/, '');
const key = process.env.WALLET_PRIVATE_KEY;
if (!key || !/^0x[0-9a-fA-F]{64}$/.test(key)) {
  console.error('WALLET_PRIVATE_KEY must be a 0x-prefixed 32-byte hex private key');
  process.exit(2);
}
const wallet = privateKeyToAccount(key as `0x${string}`);
/** `name=value` of a cookie a response sets (the value to send back in a Cookie header). */
const cookieSet = (res: Response, name: string) => res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))?.split(';')[0] ?? '';
const issued = await fetch(`${base}/api/auth/nonce`).catch((error: Error & { code?: string }) => {
  console.error(`cannot reach the service at ${base} (${error.code ?? error.message}): is it running there? Pass --url or set BASE`);
  process.exit(1);
});
if (!issued.ok) {
  console.error(`no nonce: ${issued.status} ${await issued.text()}`);
  process.exit(1);
}
const nonce = await issued.json();
const message = createSiweMessage({ address: wallet.address, chainId: nonce.chainId, domain: nonce.domain, nonce: nonce.nonce, uri: nonce.uri, version: '1', issuedAt: new Date(), statement: 'Sign in to Pre-IPO API' });
const res = await fetch(`${base}/api/auth/verify`, { method: 'POST', headers: { 'content-type': 'application/json', cookie: cookieSet(issued, 'pipo_nonce') }, body: JSON.stringify({ message, signature: await wallet.signMessage({ message }) }) });
if (!res.ok) {
  console.error(`sign-in refused: ${res.status} ${await res.text()}`);
  process.exit(1);
}
const body = await res.json();
console.error(`signed in as ${body.address}, account ${body.accountId}${body.created ? ' (created)' : ''}`);
console.log(cookieSet(res, 'pipo_session'));
