/** The console's entry: sign-in (or a printed one-time link), then the hash routes. */
import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { forgetToken, redeemLoginToken, rememberToken, storedToken } from './session';
import { useRoute } from './route';
import { LoginPage } from './pages/login';
import { ProjectsPage } from './pages/projects';
import { ProjectShell } from './pages/project-shell';

function App() {
  const [token, setToken] = useState(storedToken());
  const [linkError, setLinkError] = useState<string>();
  const oneTime = /^#login=([\w-]+)/.exec(location.hash)?.[1];
  const [redeeming, setRedeeming] = useState(Boolean(oneTime));
  const route = useRoute();

  useEffect(() => {
    if (!oneTime) return;
    // The one-time token leaves the address bar (and history) at once.
    history.replaceState(null, '', `${location.pathname}#/`);
    redeemLoginToken(oneTime).then(
      (t) => {
        rememberToken(t);
        setToken(t);
        setRedeeming(false);
      },
      (err: Error) => {
        setLinkError(err.message);
        setRedeeming(false);
      },
    );
  }, [oneTime]);

  if (redeeming) return <p className="boot">Signing in…</p>;
  if (!token)
    return (
      <LoginPage
        notice={linkError}
        onSignedIn={(t) => {
          rememberToken(t);
          setToken(t);
        }}
      />
    );
  const signOut = () => {
    forgetToken();
    setToken(undefined);
  };
  return (
    <div className="app">
      <header className="top">
        <a href="#/" className="brand">
          Strata
        </a>
        <nav>
          <a href="#/">Projects</a>
        </nav>
        <button type="button" className="link" onClick={signOut}>
          Sign out
        </button>
      </header>
      {route.page === 'project' ? <ProjectShell projectRef={route.ref} tab={route.tab} /> : <ProjectsPage />}
    </div>
  );
}

const root = document.getElementById('root');
if (root)
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
