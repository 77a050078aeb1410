/**
 * Signs in to the service with a wallet, as a customer's script would (issue #17): asks for a nonce,
 * builds the EIP-4361 message the service expects, signs it with the wallet's key, and prints the
 * session cookie (one line, `pipo_session=…`) to stdout for curl's `-b`. The key is read from
 * WALLET_PRIVATE_KEY and never sent anywhere: only the signature is.
 *
 *   WALLET_PRIVATE_KEY=0x… npm run -s sign-in -- [--url http://localhost:3000]
 */
import { parseArgs } from 'node:util';
import { privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';

const { values } = parseArgs({ args: process.argv.slice(2), options: { url: { type: 'string' } } });
const base = (values.url ?? 'http://localhost:3000').replace(/\/$/, '');
const key = process.env.WALLET_PRIVATE_KEY;
if (!key || !/^0x[0-9a-fA-F]{64}$/.test(key)) {
  console.error('WALLET_PRIVATE_KEY must be a 0x-prefixed 32-byte hex private key');
  process.exit(2);
}
const wallet = privateKeyToAccount(key as `0x${string}`);
const nonce = await (await fetch(`${base}/api/auth/nonce`)).json();
const message = createSiweMessage({ address: wallet.address, chainId: nonce.chainId, domain: nonce.domain, nonce: nonce.nonce, uri: nonce.uri, version: '1', issuedAt: new Date(), statement: 'Sign in to Pre-IPO API' });
const res = await fetch(`${base}/api/auth/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message, signature: await wallet.signMessage({ message }) }) });
if (!res.ok) {
  console.error(`sign-in refused: ${res.status} ${await res.text()}`);
  process.exit(1);
}
const body = await res.json();
console.error(`signed in as ${body.address}, account ${body.accountId}${body.created ? ' (created)' : ''}`);
console.log((res.headers.get('set-cookie') ?? '').split(';')[0]);
