import { Layout } from './layout';
import { AlertsPage } from './pages/alerts';
import { EventsPage } from './pages/events';
import { FleetPage } from './pages/fleet';
import { IncidentPage, IncidentsPage } from './pages/incidents';
import { KeysPage } from './pages/keys';
import { NodePage } from './pages/node';
import { NotificationPage, NotificationsPage } from './pages/notifications';
import { SignInPage } from './pages/sign-in';
import { SilencesPage } from './pages/silences';
import { UsersPage } from './pages/users';
import { WebhookPage, WebhooksPage } from './pages/webhooks';
import { ChannelPage, ChannelsPage } from './pages/channels';
import { useRoute } from './router';
import { useSession } from './session';
import { Empty } from './ui/states';

function Page() {
  const { segments } = useRoute();
  const [section, id] = segments;
  switch (section) {
    case undefined:
    case 'fleet':
      return <FleetPage />;
    case 'nodes':
      return id === undefined ? <FleetPage /> : <NodePage id={id} />;
    case 'events':
      return <EventsPage />;
    case 'incidents':
      return id === undefined ? <IncidentsPage /> : <IncidentPage id={id} />;
    case 'notifications':
      return id === undefined ? <NotificationsPage /> : <NotificationPage id={id} />;
    case 'alerts':
      return <AlertsPage />;
    case 'webhooks':
      return id === undefined ? <WebhooksPage /> : <WebhookPage id={id} />;
    case 'channels':
      return id === undefined ? <ChannelsPage /> : <ChannelPage id={id} />;
    case 'silences':
      return <SilencesPage />;
    case 'keys':
      return <KeysPage />;
    case 'users':
      return <UsersPage />;
    default:
      return (
        <Empty>
          <h1>Not found</h1>
          <p>
            There is no page here. <a href="#/fleet">Go to the fleet</a>.
          </p>
        </Empty>
      );
  }
}

export function App() {
  const { key } = useSession();
  if (key === null) return <SignInPage />;
  return (
    <Layout>
      <Page />
    </Layout>
  );
}
