import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ApiError } from '../api/client';
import { useSession } from '../session';
import { Field, FormError, formValues } from '../ui/forms';

interface Login {
  api_key: string;
}

const needsNewPassword = (error: unknown) =>
  error instanceof ApiError && error.status === 403 && /password change is required/i.test(error.message);

export function SignInPage() {
  const [mode, setMode] = useState<'password' | 'key'>('password');
  return (
    <main className="sign-in" id="main">
      <div className="sign-in-card">
        <p className="brand">
          <span className="brand-mark" aria-hidden="true" />
          edgewatch
        </p>
        <h1>Sign in</h1>
        <div className="segmented" role="group" aria-label="Sign in with">
          <button type="button" aria-pressed={mode === 'password'} onClick={() => setMode('password')}>
            Password
          </button>
          <button type="button" aria-pressed={mode === 'key'} onClick={() => setMode('key')}>
            API key
          </button>
        </div>
        {mode === 'password' ? <PasswordForm /> : <KeyForm />}
      </div>
    </main>
  );
}

function PasswordForm() {
  const { signIn } = useSession();
  const [step, setStep] = useState<{ email: string; password: string }>();
  const [mismatch, setMismatch] = useState(false);
  const login = useMutation({
    mutationFn: (body: { email: string; password: string; new_password?: string }) =>
      api<Login>('POST', '/api/v1/auth/login', body),
    onSuccess: (answer) => signIn(answer.api_key),
  });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const values = formValues(event.currentTarget);
    if (step === undefined) {
      const next = { email: values.email ?? '', password: values.password ?? '' };
      login.mutate(next, {
        // The first sign-in asks for a new password: the same credentials, one more field.
        onError: (error) => {
          if (needsNewPassword(error)) setStep(next);
        },
      });
      return;
    }
    if (values.new_password !== values.repeat) {
      setMismatch(true);
      return;
    }
    setMismatch(false);
    login.mutate({ ...step, new_password: values.new_password ?? '' });
  };

  if (step !== undefined) {
    return (
      <form onSubmit={submit} noValidate>
        <p className="hint">
          This is your first sign-in as <strong>{step.email}</strong>: choose a new password of at least 8
          characters.
        </p>
        <Field label="New password" error={login.error} fields={['new_password']}>
          {(props) => (
            <input {...props} name="new_password" type="password" autoComplete="new-password" required />
          )}
        </Field>
        <Field label="Repeat the new password">
          {(props) => <input {...props} name="repeat" type="password" autoComplete="new-password" required />}
        </Field>
        {mismatch ? (
          <p className="form-error" role="alert">
            The two passwords differ.
          </p>
        ) : needsNewPassword(login.error) ? null : (
          <FormError error={login.error} fields={['new_password']} />
        )}
        <button type="submit" className="primary" disabled={login.isPending}>
          Change password and sign in
        </button>
      </form>
    );
  }
  return (
    <form onSubmit={submit} noValidate>
      <Field label="E-mail" error={login.error} fields={['email']}>
        {(props) => <input {...props} name="email" type="email" autoComplete="username" required />}
      </Field>
      <Field label="Password" error={login.error} fields={['password']}>
        {(props) => (
          <input {...props} name="password" type="password" autoComplete="current-password" required />
        )}
      </Field>
      <FormError error={login.error} fields={['email', 'password']} />
      <button type="submit" className="primary" disabled={login.isPending}>
        Sign in
      </button>
    </form>
  );
}

function KeyForm() {
  const { signIn } = useSession();
  const [error, setError] = useState<unknown>();
  const [checking, setChecking] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const key = formValues(event.currentTarget).key ?? '';
    setChecking(true);
    try {
      const answer = await fetch('/api/v1/user/me', { headers: { 'x-api-key': key } });
      if (answer.status === 401)
        throw new ApiError(401, 'That key is not valid: check it, or create a new one.');
      if (!answer.ok) throw new ApiError(answer.status, `The service answered ${answer.status}.`);
      signIn(key);
    } catch (failure) {
      setError(
        failure instanceof ApiError
          ? failure
          : new ApiError(0, 'The service cannot be reached. Check that it is running.'),
      );
    } finally {
      setChecking(false);
    }
  };
  return (
    <form onSubmit={(event) => void submit(event)} noValidate>
      <Field label="API key" hint="Sent as X-API-KEY; kept in this tab only, forgotten on sign-out.">
        {(props) => (
          <input {...props} name="key" type="password" autoComplete="off" spellCheck={false} required />
        )}
      </Field>
      <FormError error={error} />
      <button type="submit" className="primary" disabled={checking}>
        Sign in with the key
      </button>
    </form>
  );
}
