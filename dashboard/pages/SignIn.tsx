import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorMessage } from '../components/ErrorMessage.tsx';
import { hasWallet, signInWithWallet } from '../wallet.ts';

/** Signed out: sign in with an injected wallet (EIP-1193 + EIP-4361). */
export function SignIn() {
  const queryClient = useQueryClient();
  const [walletPresent] = useState(hasWallet);
  const signIn = useMutation({
    mutationFn: signInWithWallet,
    // A fresh session: forget everything cached for whoever was here before, then load the account.
    onSuccess: () => queryClient.resetQueries(),
  });
  return (
    <main id="main" className="signin" tabIndex={-1}>
      <section className="card signin-card" aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in</h1>
        <p>Sign in with the wallet of your account. Your wallet asks you to sign a message: it costs nothing and sends no transaction.</p>
        {walletPresent ? (
          <button type="button" className="button button-primary button-wide" onClick={() => signIn.mutate()} disabled={signIn.isPending} aria-describedby="signin-help">
            {signIn.isPending ? 'Waiting for your wallet…' : 'Sign in with your wallet'}
          </button>
        ) : (
          <div className="notice" role="status">
            <p className="notice-title">No wallet found in this browser</p>
            <p>
              Signing in needs a browser wallet such as MetaMask, Rabby or Coinbase Wallet. Install or enable one, then reload this page. On a phone, open this
              page in your wallet app's browser.
            </p>
          </div>
        )}
        <p id="signin-help" className="muted small">
          The first sign-in with a wallet creates your account.
        </p>
        {signIn.isError ? <ErrorMessage error={signIn.error} title="Sign-in did not complete" /> : null}
      </section>
    </main>
  );
}
