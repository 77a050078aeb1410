/**
 * A TCP proxy in front of PostgreSQL that can be cut like a stopped server: `cut()` closes every open
 * connection and stops listening, so new connections are refused (ECONNREFUSED, as with a stopped
 * PostgreSQL); `restore()` listens on the same port again. The app under test connects through it.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface CuttableProxy {
  port: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startCuttableProxy(target: { host: string; port: number }): Promise<CuttableProxy> {
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection(target);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => {});
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen(0);
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('proxy has no port');
  const port = address.port;
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      for (const socket of open) socket.destroy();
    });
  return {
    port,
    cut: () => void stop(),
    restore: () => void listen(port),
    close: stop,
  };
}
