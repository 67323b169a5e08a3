import { useState, type FormEvent } from 'react';
import { api, query, type Page } from '../api/client';
import { useChange } from '../api/hooks';
import type { FleetNode } from '../api/types';
import { useSession } from '../session';
import { Dialog } from '../ui/dialog';
import { Field, FormError, formValues } from '../ui/forms';
import { isoOf } from '../ui/filters';
import type { Column } from '../ui/table';

/** As many ids as one bulk call of the API takes. */
export const MAX_BULK = 1000;

export interface Selection {
  ids: ReadonlySet<string>;
  /** Every node the filters match, rather than the ids ticked. */
  allMatching: boolean;
  toggle: (id: string, on: boolean) => void;
  selectAllMatching: () => void;
  clear: () => void;
}

export function useSelection(): Selection {
  const [ids, setIds] = useState<ReadonlySet<string>>(new Set());
  const [allMatching, setAllMatching] = useState(false);
  return {
    ids,
    allMatching,
    toggle: (id, on) => {
      setAllMatching(false);
      setIds((now) => {
        const next = new Set(now);
        if (on) next.add(id);
        else next.delete(id);
        return next;
      });
    },
    selectAllMatching: () => setAllMatching(true),
    clear: () => {
      setAllMatching(false);
      setIds(new Set());
    },
  };
}

export function selectColumn(selection: Selection): Column<FleetNode> {
  return {
    header: 'Select',
    cell: (node) => (
      <input
        type="checkbox"
        aria-label={`Select ${node.name}`}
        checked={selection.allMatching || selection.ids.has(node.id)}
        onChange={(event) => selection.toggle(node.id, event.target.checked)}
      />
    ),
  };
}

/** The ids a bulk action acts on: those ticked, or the first MAX_BULK the filters match, a page at a time. */
async function idsOf(selection: Selection, filters: Record<string, string | boolean | undefined>) {
  if (!selection.allMatching) return [...selection.ids];
  const ids: string[] = [];
  for (let page = 0; ids.length < MAX_BULK; page += 1) {
    const found = await api<Page<FleetNode>>('GET', `/api/v2/node${query({ ...filters, page, size: 100 })}`);
    ids.push(...found.results.map((node) => node.id));
    if (found.results.length < 100) break;
  }
  return ids.slice(0, MAX_BULK);
}

interface BulkAnswer {
  succeeded: number;
  failed: number;
  results: { id: string; status: number; body: { message: string } }[];
}

/** One line per kind of refusal: "2 not found", "1: 1 alert(s) …". */
function outcome(answer: BulkAnswer, done: string): string {
  const refusals = new Map<string, number>();
  for (const result of answer.results) {
    if (result.status < 300) continue;
    refusals.set(result.body.message, (refusals.get(result.body.message) ?? 0) + 1);
  }
  const refused = [...refusals].map(
    ([message, count]) => `${count.toLocaleString('en')} refused: ${message}`,
  );
  return [`${answer.succeeded.toLocaleString('en')} ${done}.`, ...refused].join(' ');
}

const inAnHour = () => {
  const at = new Date(Date.now() + 3_600_000);
  at.setSeconds(0, 0);
  return new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

function SilenceNodes({ ids, onDone }: { ids: () => Promise<string[]>; onDone: (said: string) => void }) {
  const { me } = useSession();
  const open = useChange(
    async (form: Record<string, string>) => {
      const answer = await api<BulkAnswer>('POST', '/api/v1/silence', {
        name: form.name,
        org_id: me?.org_id,
        node_ids: await ids(),
        starts_at: new Date().toISOString(),
        ends_at: isoOf(form.ends_at ?? ''),
        ...(form.comment ? { comment: form.comment } : {}),
      });
      return outcome(answer, 'maintenance window(s) opened');
    },
    ['/api/v2/silence', '/api/v2/node'],
    onDone,
  );
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    open.mutate(formValues(event.currentTarget));
  };
  return (
    <form onSubmit={submit} noValidate>
      <p>Notifications about these nodes are kept as suppressed, not sent, from now until the end.</p>
      <Field label="Name" error={open.error} fields={['name']}>
        {(props) => <input {...props} name="name" defaultValue="Maintenance" required autoComplete="off" />}
      </Field>
      <Field label="Ends" error={open.error} fields={['ends_at']}>
        {(props) => (
          <input {...props} name="ends_at" type="datetime-local" defaultValue={inAnHour()} required />
        )}
      </Field>
      <Field label="Comment (optional)" error={open.error} fields={['comment']}>
        {(props) => <textarea {...props} name="comment" rows={2} />}
      </Field>
      <FormError error={open.error} fields={['name', 'ends_at', 'comment']} />
      <div className="form-actions">
        <button type="submit" className="primary" disabled={open.isPending}>
          Open the window now
        </button>
      </div>
    </form>
  );
}

function DeleteNodes({
  count,
  ids,
  onDone,
}: {
  count: string;
  ids: () => Promise<string[]>;
  onDone: (said: string) => void;
}) {
  const [force, setForce] = useState(false);
  const remove = useChange(
    async () => {
      const answer = await api<BulkAnswer>('POST', '/api/v1/node/delete', { ids: await ids(), force });
      return outcome(answer, 'node(s) deleted');
    },
    ['/api/v2/node', '/api/v2/tunnel', '/api/v2/service', '/api/v2/mysubscriptions'],
    onDone,
  );
  return (
    <>
      <p>
        {count} will be removed with their tunnels and services. A node whose alerts are scoped to it is kept,
        unless you also remove those alerts.
      </p>
      <label className="check">
        <input type="checkbox" checked={force} onChange={(event) => setForce(event.target.checked)} />
        Also delete the alerts scoped to them
      </label>
      <FormError error={remove.error} />
      <div className="form-actions">
        <button
          type="button"
          className="danger"
          onClick={() => remove.mutate(undefined)}
          disabled={remove.isPending}
        >
          Delete them
        </button>
      </div>
    </>
  );
}

/** What is selected, and what can be done to it at once. */
export function BulkBar({
  selection,
  filters,
  total,
}: {
  selection: Selection;
  filters: Record<string, string | boolean | undefined>;
  total: number;
}) {
  const [action, setAction] = useState<'silence' | 'delete' | undefined>();
  const [said, setSaid] = useState('');
  const count = selection.allMatching ? Math.min(total, MAX_BULK) : selection.ids.size;
  const counted = `${count.toLocaleString('en')} node${count === 1 ? '' : 's'}`;
  const done = (what: string) => {
    setAction(undefined);
    setSaid(what);
    selection.clear();
  };
  return (
    <div className="bulk-bar" role="region" aria-label="Selected nodes">
      <p role="status">
        {count === 0 ? said || 'Tick nodes to act on several at once.' : `${counted} selected.`}
        {selection.allMatching && total > MAX_BULK
          ? ` The first ${MAX_BULK.toLocaleString('en')} of ${total.toLocaleString('en')}: one action takes at most ${MAX_BULK.toLocaleString('en')}.`
          : ''}
      </p>
      {!selection.allMatching && total > 0 ? (
        <button type="button" className="small" onClick={selection.selectAllMatching}>
          Select all {total.toLocaleString('en')} matching
        </button>
      ) : null}
      {count > 0 ? (
        <>
          <button type="button" className="small" onClick={() => setAction('silence')}>
            Maintenance window…
          </button>
          <button type="button" className="danger small" onClick={() => setAction('delete')}>
            Delete…
          </button>
          <button type="button" className="quiet small" onClick={selection.clear}>
            Clear selection
          </button>
        </>
      ) : null}
      <Dialog
        title={`Maintenance window for ${counted}`}
        open={action === 'silence'}
        onClose={() => setAction(undefined)}
      >
        <SilenceNodes ids={() => idsOf(selection, filters)} onDone={done} />
      </Dialog>
      <Dialog title={`Delete ${counted}`} open={action === 'delete'} onClose={() => setAction(undefined)}>
        <DeleteNodes count={counted} ids={() => idsOf(selection, filters)} onDone={done} />
      </Dialog>
    </div>
  );
}
